// Register values shared by the assembly entry code (ARM DDI 0487 section D17/D19 names).
#pragma once

#define HCR_EL2_RW            (1 << 31)  // EL1 is AArch64
#define CPTR_EL2_RES1         0x33ff     // RES1 bits, TFP = 0
#define SCTLR_EL1_BOOT        0x30d00800 // RES1 bits only: MMU, caches, alignment checks off
#define SPSR_EL1H_DAIF_MASKED 0x3c5      // EL1h, D A I F masked
#define CPACR_EL1_FPEN        (3 << 20)  // no FP/SIMD traps at EL0/EL1
#define ICC_SRE_EL2           S3_4_C12_C9_5
