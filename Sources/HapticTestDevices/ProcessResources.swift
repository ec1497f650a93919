// What this process holds of the machine, read from /proc/self: how benchmarks and load runs see memory.
import LinuxInput

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
}
