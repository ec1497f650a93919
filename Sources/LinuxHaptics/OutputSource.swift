// Where an engine's output comes from, and how it hears that the output's device left or came back.
package import Logging

/// Device presence changes an output source reports.
package enum OutputPresence: Sendable {
    case removed
    case appeared
}

/// A running hot-plug watch; cancelling it releases its descriptors.
package protocol OutputWatch: Sendable {
    func cancel()
}

/// Opens the output an engine was created for and watches its device come and go.
package protocol OutputSource: Sendable {
    func open(clock: any HapticClock, logger: Logger) throws(OutputFailure) -> any MotorOutput
    /// Starts watching; nil when the output cannot come and go (virtual) or watching is unavailable.
    func watch(logger: Logger, _ handler: @escaping @Sendable (OutputPresence) -> Void) -> (any OutputWatch)?
}
