// The record file reader of the virtual pad and the emulated controllers (JSON lines).
import HapticTestDevices

/// Every record read must be written back as one line that reads back equal, and print as the live view shows
/// it.
package enum PadRecordFuzzing {
    package static func run(_ bytes: UnsafeRawBufferPointer) {
        guard let records = try? PadRecord.decodeLines(String(decoding: bytes, as: UTF8.self)) else { return }
        for record in records {
            let line = record.jsonLine()
            expect(!line.contains("\n"), "a record written over several lines: \(line)")
            expect((try? PadRecord(jsonLine: line)) == record, "record -> line -> record changed it: \(line)")
            expect(!record.time.description.isEmpty, "a record time without text")
        }
    }
}
