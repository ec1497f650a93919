// The inotify record reader: the bytes the kernel hands the device monitor's container fallback on /dev/input.
import Glibc
import LinuxInput

/// Records are whole (a name never holds its NUL padding), never more than the bytes allow, and written back
/// the kernel's way they read back unchanged.
package enum InotifyFuzzing {
    private static let headerSize = MemoryLayout<inotify_event>.size

    package static func run(_ bytes: UnsafeRawBufferPointer) {
        let records = InotifyRecord.parse(bytes)
        expect(records.count <= bytes.count / headerSize, "\(records.count) records from \(bytes.count) bytes")
        expect(records.allSatisfy { !$0.name.utf8.contains(0) }, "a name holds a NUL")
        let written = records.flatMap(kernelBytes)
        let reread = written.withUnsafeBytes { InotifyRecord.parse($0) }
        expect(reread == records, "records -> bytes -> records changed them")
    }

    /// One record as `inotify_event`: the header, then the name NUL-padded to a multiple of the header's size.
    private static func kernelBytes(of record: InotifyRecord) -> [UInt8] {
        let name = Array(record.name.utf8)
        let padded = (name.count / headerSize + 1) * headerSize
        var header = inotify_event()
        header.wd = record.watch
        header.mask = record.mask
        header.len = UInt32(padded)
        return withUnsafeBytes(of: header) { Array($0) } + name + [UInt8](repeating: 0, count: padded - name.count)
    }
}
