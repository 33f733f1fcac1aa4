#pragma once
// The disk through the storage task's Disk capability, as the log and the checkpoints see a block
// device (storage::BlockDevice): transfers of at most kWindow bytes per system call, each with the
// storage task's I/O timeout.
#include <cstdint>
#include <cstring>

#include <abi/sys.h>
#include <storage/block_device.h>

#include "storage_task.h"

namespace storaged {

// The disk through the storage task's capability, as the log sees a block device. Reads go
// through a read-ahead window: recovery walks the log a sector at a time, and one system call
// per sector would make a boot with a long log slow for nothing.
class DiskClient final : public storage::BlockDevice {
public:
    static constexpr uint32_t kWindow = 64 * 1024;

    DiskClient(uint32_t cap, uint64_t bytes) : m_cap(cap), m_sectors(bytes / abi::kDiskSector) {}
    uint32_t sector_size() const override { return abi::kDiskSector; }
    uint64_t sectors() const override { return m_sectors; }

    ktl::Result<void> read(uint64_t lba, std::span<std::byte> out) override {
        if (out.size() % abi::kDiskSector != 0 || lba > m_sectors || out.size() / abi::kDiskSector > m_sectors - lba)
            return ktl::Error::OutOfRange;
        for (size_t done = 0; done < out.size(); done += abi::kDiskSector) {
            const uint64_t sector = lba + done / abi::kDiskSector;
            if (!m_window_valid || sector < m_window_first || sector >= m_window_first + m_window_sectors) {
                uint64_t want = kWindow / abi::kDiskSector;
                if (want > m_sectors - sector)
                    want = m_sectors - sector;
                int64_t r = sys::disk_read(m_cap, sector, m_window, want * abi::kDiskSector, kIoTimeoutNs);
                if (r < 0)
                    return ktl::Error::IoError;
                m_window_first = sector;
                m_window_sectors = want;
                m_window_valid = true;
            }
            std::memcpy(out.data() + done, m_window + (sector - m_window_first) * abi::kDiskSector, abi::kDiskSector);
        }
        return {};
    }

    ktl::Result<void> write(uint64_t lba, std::span<const std::byte> data) override {
        if (data.size() % abi::kDiskSector != 0 || lba > m_sectors || data.size() / abi::kDiskSector > m_sectors - lba)
            return ktl::Error::OutOfRange;
        m_window_valid = false; // what it held may be stale now
        for (size_t done = 0; done < data.size();) {
            size_t n = data.size() - done;
            if (n > kWindow)
                n = kWindow;
            int64_t r = sys::disk_write(m_cap, lba + done / abi::kDiskSector, data.data() + done, n, kIoTimeoutNs);
            if (r < 0)
                return r == -static_cast<int64_t>(ktl::Error::OutOfRange) ? ktl::Error::OutOfRange
                                                                          : ktl::Error::IoError;
            done += n;
        }
        return {};
    }

    ktl::Result<void> flush() override {
        int64_t r = sys::disk_flush(m_cap, kIoTimeoutNs);
        if (r == -static_cast<int64_t>(ktl::Error::Unsupported))
            return ktl::Error::Unsupported;
        return r < 0 ? ktl::Result<void>(ktl::Error::IoError) : ktl::Result<void>();
    }

private:
    uint32_t m_cap;
    uint64_t m_sectors;
    alignas(64) std::byte m_window[kWindow];
    uint64_t m_window_first = 0, m_window_sectors = 0;
    bool m_window_valid = false;
};

} // namespace storaged
