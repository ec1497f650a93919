// A log handler that keeps what it is given, so a test can check that a failure was logged and what it said.
public import Logging
import LinuxInput
@_spi(Internals) import LinuxSystem

/// Keeps every message logged through `logger`, each with its metadata appended as sorted `key=value` pairs, and
/// hands each to `hook` as it is logged, on the thread that logs it (a test may hold that thread there).
public final class RecordingLog: Sendable {
    private let messages = Lock<[(Logger.Level, String)]>([])
    private let hook: (@Sendable (Logger.Level, String) -> Void)?

    public init(hook: (@Sendable (_ level: Logger.Level, _ message: String) -> Void)? = nil) { self.hook = hook }

    /// A logger at `trace` level whose every message this log keeps.
    public var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(log: self) }
        logger.logLevel = .trace
        return logger
    }

    public var entries: [(level: Logger.Level, message: String)] { messages.withLock { $0.map { ($0.0, $0.1) } } }

    /// Whether any message (with its metadata) contains `text`.
    public func contains(_ text: String) -> Bool { entries.contains { $0.message.contains(text) } }

    /// Forgets every message kept so far.
    public func removeAll() { messages.withLock { $0.removeAll() } }

    fileprivate func append(_ level: Logger.Level, _ message: String) {
        messages.withLock { $0.append((level, message)) }
        hook?(level, message)
    }

    struct Handler: LogHandler {
        let log: RecordingLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let details = (event.metadata ?? [:]).map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
            log.append(event.level, "\(event.message) \(details)")
        }
    }
}
