// The Pi 4 image's built-in device tree (kernel/board/rpi4.dts, compiled by the build into
// rpi4.dtb), for a start without one from the firmware. 8-byte aligned, as the format requires.
    .section .rodata.builtin_dtb, "a"
    .balign 8
    .global basalt_builtin_dtb
basalt_builtin_dtb:
    .incbin "rpi4.dtb"
    .balign 8
