// Outputs whose actuators a stream of their own drives (a DualSense's voice coils, a Switch pad's HD rumble): the
// engine keeps the stream in line with its players (`sync`, from the same cues the engine's sound follows), and
// the motor primitives write nothing.
import AHAP
import HapticRendering
import LinuxInput
import Synchronization

/// A stream that plays the engine's patterns on a pad's actuators by itself (`VoiceCoilStream`, `HDRumbleMember`).
protocol PatternStream: Sendable {
    /// The node or ALSA device it writes.
    var deviceName: String { get }
    /// Why it ended, once it did.
    var failure: OutputFailure? { get }
    /// Reports (or periods) written, and underruns, so far.
    var counts: (reports: Int, underruns: Int) { get }
    /// What the actuators were last sent.
    var activity: ActuatorActivity { get }
    /// What the actuators played at `time` (engine time, the stream's clock): a moment of the last quarter second, asked
    /// once it has passed, is answered as it was, so a caller that woke late to ask still reads it.
    func activity(at time: Double) -> ActuatorActivity
    /// How many seconds ahead of now a pattern must start to be played from its first sample: what the stream has
    /// already queued. A start placed sooner is kept in time by skipping into the pattern, which would cut a
    /// short tap; the engine places starts this far ahead instead (0: a start now is played whole).
    var startLead: Double { get }
    /// Makes it play what `players` ask for from `now` (nothing once closed).
    func sync(_ players: [PlayerID: WaveformPlayer], now: Double)
    /// Does ahead what playing `pattern` needs whenever it starts (a player was made with it), so that its start
    /// does not: the streams whose work all depends on the start do nothing.
    func prepare(_ pattern: HapticPattern)
    /// Ends it (its last report puts the actuators at rest) and closes what it writes.
    func close()
}

extension PatternStream {
    func prepare(_ pattern: HapticPattern) {}
}

/// A motor output for a pad whose actuators a `PatternStream` drives (a DualSense's voice coils, a Switch pad's HD
/// rumble): the motor primitives write nothing, the stream carries the pattern, and each primitive reports the
/// stream's failure, so the engine hears of an unplug through the next one it calls.
final class StreamedOutput<Stream: PatternStream>: OutputWithoutPulses {
    let capabilities: OutputCapabilities
    /// Held open for the pad's identity and so that its slot in the kernel stays ours; written by the stream
    /// alone, when the stream plays on the event node itself (a PID device's periodic effects).
    private let device: EventDevice
    let stream: Stream
    let actuatorsName: String
    private let closed = Atomic<Bool>(false)

    init(device: EventDevice, stream: Stream, actuatorsName: String, capabilities: OutputCapabilities) {
        self.device = device
        self.stream = stream
        self.actuatorsName = actuatorsName
        self.capabilities = capabilities
    }

    /// The output of a pad's HD actuators of `kind`, which the stream reaches through its own node.
    convenience init(device: EventDevice, stream: Stream, kind: HDActuators.Kind, driver: String?) {
        var capabilities = OutputCapabilities(device: device, driver: driver)
        capabilities.hdNode = stream.deviceName
        capabilities.hdKind = kind
        self.init(device: device, stream: stream, actuatorsName: kind.rawValue, capabilities: capabilities)
    }

    private func check() throws(OutputFailure) {
        if closed.load(ordering: .relaxed) { throw OutputFailure(.closed, "the output is closed") }
        if let failure = stream.failure { throw failure }
    }

    func sendNeutral() throws(OutputFailure) { try check() }
    func apply(_ mix: MotorMagnitudes) throws(OutputFailure) { try check() }
    func keepAlive() throws(OutputFailure) { try check() }

    /// Ends the stream, then closes the event node.
    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        stream.close()
        device.close()
    }
}

/// What the engine asks of an output whose patterns a stream plays, whatever the stream.
protocol PatternStreamOutput: MotorOutput {
    func sync(_ players: [PlayerID: WaveformPlayer], now: Double)
    func prepare(_ pattern: HapticPattern)
    var activity: ActuatorActivity { get }
    func activity(at time: Double) -> ActuatorActivity
    var streamCounts: (reports: Int, underruns: Int) { get }
    var startLead: Double { get }
}

extension StreamedOutput: PatternStreamOutput {
    func sync(_ players: [PlayerID: WaveformPlayer], now: Double) { stream.sync(players, now: now) }
    func prepare(_ pattern: HapticPattern) { stream.prepare(pattern) }
    var activity: ActuatorActivity { stream.activity }
    func activity(at time: Double) -> ActuatorActivity { stream.activity(at: time) }
    var streamCounts: (reports: Int, underruns: Int) { stream.counts }
    var startLead: Double { stream.startLead }
}

/// What a stream sent its actuators over the last second, each change at the time it went out: what they played at a
/// moment just past, for a caller that asks once the moment is over (`haptics feedback` reads each tap's level after
/// it; read as the last report written, a tap was read at whatever the caller's wake-up found, silence after a late
/// one, until 7 December).
struct ActivityHistory: Sendable {
    /// How far back a moment is answered as it was, in seconds.
    static let span = 1.0
    private var changes: [(time: Double, activity: ActuatorActivity)] = []

    /// The last activity sent.
    var latest: ActuatorActivity { changes.last?.activity ?? .atRest }
    /// How many changes are kept.
    var changesKept: Int { changes.count }

    /// `activity` went out at `time`: kept in time order, so that a write that comes back after a later one (a
    /// report's own time taken before the rest that ended the stream) never reads on after it.
    mutating func record(_ activity: ActuatorActivity, at time: Double) {
        let index = changes.lastIndex { $0.time <= time }.map { $0 + 1 } ?? 0
        guard index == 0 || changes[index - 1].activity != activity else { return }
        changes.insert((time, activity), at: index)
        // The last change at or before `span` before the latest still tells what played then; the ones before it go.
        let latest = changes[changes.count - 1].time
        if let oldest = changes.lastIndex(where: { $0.time <= latest - Self.span }), oldest > 0 {
            changes.removeFirst(oldest)
        }
    }

    /// What was sent last at or before `time`; at rest before anything was.
    func activity(at time: Double) -> ActuatorActivity {
        changes.last { $0.time <= time }?.activity ?? .atRest
    }
}

/// The voice coils' output.
typealias VoiceCoilOutput = StreamedOutput<VoiceCoilStream>
/// HD rumble's output.
typealias HDRumbleOutput = StreamedOutput<HDRumbleMember>
/// A PID device's output: its periodic effects.
typealias PeriodicEffectOutput = StreamedOutput<PeriodicEffectStream>
