// Where a test device's records go: kept in memory (unless told not to), appended to a JSON-lines file, and
// handed to every live subscriber, in the order they happened. One owner for the virtual pad and every
// emulated controller.
internal import Glibc
import LinuxInput
import Logging
import Synchronization
@_spi(Internals) import LinuxSystem

final class DeviceRecordLog: Sendable {
    private struct State: Sendable {
        var records: [PadRecord] = []
        var inputReports: [StreamedInputReport] = []
        var subscribers: [Int: AsyncStream<PadRecord>.Continuation] = [:]
        var nextSubscriber = 0
        var finished = false
    }

    private let file: Int32?
    private let keepsRecords: Bool
    private let logger: Logger
    private let state = Lock(State())
    private let fileClosed = Atomic(false)

    /// Opens (truncating) the record file at `path`, when there is one.
    init(path: String?, keepsRecords: Bool, logger: Logger) throws(SystemCallError) {
        file = try path.map { path throws(SystemCallError) in
            try Sys.create(path, flags: O_WRONLY | O_TRUNC | O_APPEND, mode: Self.fileMode)
        }
        self.keepsRecords = keepsRecords
        self.logger = logger
    }

    /// rw-r--r--: records are readable by whoever inspects them.
    static let fileMode: mode_t = 0o644

    /// Everything so far (nothing when records are not kept).
    func records() -> [PadRecord] { state.withLock { $0.records } }

    func append(_ record: PadRecord) {
        if let file, !fileClosed.load(ordering: .sequentiallyConsistent) { write(record.jsonLine() + "\n", to: file) }
        state.withLock { state in
            if keepsRecords { state.records.append(record) }
            for subscriber in state.subscribers.values { subscriber.yield(record) }
        }
    }

    private func write(_ line: String, to file: Int32) {
        Array(line.utf8).withUnsafeBytes { bytes in
            do throws(SystemCallError) {
                try Sys.writeAll(file, bytes)
            } catch {
                logger.info("could not write the record file", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The input reports the device streamed by itself, at most the latest `inputReportsKept` (nothing when records
    /// are not kept).
    func inputReports() -> [StreamedInputReport] { state.withLock { $0.inputReports } }

    /// Notes a streamed input report; kept in memory only, beside the records.
    func noteInputReport(_ report: StreamedInputReport) {
        guard keepsRecords else { return }
        state.withLock { state in
            state.inputReports.append(report)
            if state.inputReports.count > Self.inputReportsKept {
                state.inputReports.removeFirst(state.inputReports.count - Self.inputReportsKept / 2)
            }
        }
    }

    /// A minute of a pad's reports at 15 ms.
    static let inputReportsKept = 4096

    /// Records from now on; the stream finishes when the log does.
    func subscribe() -> AsyncStream<PadRecord> {
        let (stream, continuation) = AsyncStream.makeStream(of: PadRecord.self)
        let finished = state.withLock { state in
            if state.finished { return true }
            let key = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[key] = continuation
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.subscribers.removeValue(forKey: key) }
            }
            return false
        }
        if finished { continuation.finish() }
        return stream
    }

    /// Ends every stream and closes the file. Safe to call more than once.
    func finish() {
        let subscribers = state.withLock { state -> [AsyncStream<PadRecord>.Continuation] in
            if state.finished { return [] }
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    /// Closes the record file, after the last `append`. Safe to call more than once.
    func closeFile() {
        guard let file, !fileClosed.exchange(true, ordering: .sequentiallyConsistent) else { return }
        Sys.close(file)
    }
}
