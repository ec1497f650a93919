// What this process holds of the machine, from /proc/self and from the allocator: how benchmarks and load runs
// see memory.
internal import CLinuxSystem
import LinuxInput
@_spi(Internals) import LinuxSystem

package enum ProcessResources {
    /// Resident memory of this process in bytes, from `/proc/self/statm` (its second field, in pages); `nil`
    /// where that file does not exist. Page-granular, so it is meaningful for growth of tens of kilobytes and more.
    package static func residentBytes() -> Int? {
        let pageSize = 4096  // bytes; the x86-64 and arm64 Linux default, and what statm counts in
        guard let text = try? Sys.readSmallFile("/proc/self/statm") else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * pageSize
    }

    /// The heap this process holds: bytes allocated and not freed (glibc's `mallinfo2`, every arena). Unlike the
    /// resident size it leaves out what the allocator keeps after frees, so a leak shows in it and caching does not.
    package static func heapBytesInUse() -> Int { Int(cls_heap_bytes_in_use()) }

    /// How many threads this process runs (`Threads:` in `/proc/self/status`); nil where that file does not exist.
    package static func threadCount() -> Int? {
        guard let status = try? Sys.readSmallFile("/proc/self/status", limit: 8192) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
        return line.flatMap { Int($0.dropFirst("Threads:".count).trimmingPrefix(while: \.isWhitespace)) }
    }
}
