// A Switch controller's HD rumble: patterns played as a frequency and an amplitude in each of two bands per
// actuator (sharpness as the frequency) instead of the two fixed-frequency levels hid-nintendo sends. Each playing
// player's cues (PlayerState.cues, as on the voice coils) become sources on an `HDRumbleStream`, whose timer (a
// thread of its own on the monotonic clock) writes output report 0x10 to the pad's hidraw node:
// - one report per update while anything plays, 30 ms apart: the pace hid-nintendo keeps for its own rumble (it
//   never sends two reports within 25 ms, because faster sends can drop a Bluetooth link), so our reports and
//   the driver's subcommands stay within what the link is known to carry;
// - a report sooner (but never within 25 ms of the last) when a player starts, so a tap is not held back a whole
//   update;
// - three reports at rest after the last sound, then nothing until something plays (as the driver sends several
//   silent reports in case one is lost).
// The pad holds each report's bands until the next. One stream per pad in a process: every engine on the pad's HD
// rumble is a member of it (`HDRumbleMember`), its sources mixed with the others' (two engines, one per handle's
// locality, play left and right; two writers of one pad's reports would interleave them, and each would send
// the other's actuator at rest). A process that is killed or stopped cannot send the report at
// rest, so a guard process writes it for us (`HidrawSilenceGuard`); when the stream itself stood still that long
// while armed (the whole machine held up), the guard's report took the next counter, and the stream's next report
// skips it, even when the stream stood still after taking its counter and before telling the guard. The kernel's
// FF_RUMBLE is never used on the pad meanwhile: its reports would set both bands at the driver's fixed frequencies.
package import AHAP
package import HapticRendering
package import LinuxInput
@_spi(Internals) import LinuxSystem
package import Logging
import AudioRendering
import Synchronization

/// What writes silence for us when we stop writing: the guard process of a hidraw stream.
package protocol SilenceKeeper: Sendable {
    /// Tells the keeper a report was written: whether the actuators now play (`armed`), and the report that
    /// would put them at rest next.
    func heartbeat(armed: Bool, silence: [UInt8])
    func close()
    /// How long heartbeats may pause while armed before the keeper writes the silence.
    var timeoutNanoseconds: UInt64 { get }
    /// Whether the keeper was found gone: it will write nothing any more.
    var isGone: Bool { get }
}

extension HidrawSilenceGuard: SilenceKeeper {}

/// Where the stream's reports go: a pad's hidraw node.
package protocol ReportDevice: Sendable {
    var node: String { get }
    /// Writes one whole report; `.deviceGone` once the device is unplugged.
    func write(_ report: [UInt8]) throws(EventDeviceError)
    func close()
}

extension HidrawDevice: ReportDevice {}

/// The bands of a Switch controller's actuators: sources placed on the `CLOCK_MONOTONIC` timeline, mixed per
/// update and written as report 0x10 by the timer of the stream's clock (`MonotonicClock`'s: a thread of its own).
/// One per pad in a process, whichever engines play on it (`HDRumbleMember` is an engine's membership).
package final class HDRumbleStream: CueStream, Sendable {
    /// Seconds between two reports while anything plays.
    package static let updateSeconds = 0.030
    /// The least time between two reports: what hid-nintendo waits between its own sends.
    package static let minimumSpacingSeconds = 0.025
    /// Reports at rest sent after the last sound.
    package static let restReports = 3
    /// How long the silence guard waits for the next report before it puts the actuators at rest: past three
    /// reports' worth of lateness at 30 ms, and within the 150 ms a killed or stopped process may leave a pad
    /// vibrating.
    package static let silenceTimeoutMilliseconds = 100
    /// How far short of the keeper's timeout an armed pause already skips a counter: the time between the check
    /// and the heartbeat that follows it, with room for the thread to be held up in between.
    package static let keeperMarginNanoseconds: UInt64 = 20_000_000

    /// One player's cue: its pattern's bands from a frame on, placed on the clock.
    package struct Source: Sendable {
        let renderer: BandRenderer
        /// The renderer's frame at `startNanoseconds`.
        let offsetFrame: Int
        /// Where a loop goes back to 0, its passes counted from the one `offsetFrame` is in; nil when the player
        /// does not loop.
        let loop: LoopFrames?
        /// Its engine's gain, 0...1: every carrier's amplitude is scaled by it before the mix.
        let gain: Double
        /// Both sides carry its carriers: a lone Joy-Con has one actuator, which reads its own side's bytes, so a
        /// `left` or `right` pattern plays on it rather than on an actuator it does not have.
        let foldsSides: Bool

        package init(
            renderer: BandRenderer, offset: Double, loopLength: Double?, gain: Double = 1, foldsSides: Bool = false
        ) {
            self.renderer = renderer
            self.gain = PureMath.unitClamped(gain)
            self.foldsSides = foldsSides
            offsetFrame = FrameCount.of(offset, at: renderer.framesPerPatternSecond)
            loop = loopLength.map { LoopFrames(length: $0, rate: renderer.framesPerPatternSecond) }
        }
    }

    private struct Placed {
        var source: Source
        var start: UInt64
        var end: UInt64?
    }

    /// The time from the heartbeat that armed the keeper to the one that disarmed it (`until`, nil while still
    /// armed): while it lasts the keeper may write the silence that heartbeat carried.
    private struct ArmedSpan {
        var since: UInt64
        var until: UInt64?
    }

    private struct State {
        var sources: [Int: Placed] = [:]
        var nextID = 0
        var counter: UInt8 = 0
        var lastWrite: UInt64?
        /// When the last update was looked at: its report's write (`lastWrite`), or, when it was silent with no
        /// rest report owed, the look itself. The regular pace counts from it, so a silent stretch of a playing
        /// pattern is looked at once an update, not over and over.
        var lastUpdate: UInt64?
        /// After a silent update (a report at rest, or a look that wrote nothing): when a voice of a playing source
        /// is next under way after it (`nextVoice`). With no report at rest owed, the next look waits for it; with
        /// one owed whose update would reach it, that report is left out and the next look waits for it too.
        /// Either way the voice's start goes out at its time, not carried early by an update that reaches it.
        /// Cleared by any update that sounds and any change to the sources.
        var quietUntil: UInt64?
        /// Where the last update's frames ended: the next one reads from there when it comes later (the thread
        /// woke late, the write took a while), so that no frame falls between two updates.
        var coveredUntil: UInt64?
        /// When the keeper was last armed by a heartbeat, and when disarmed again; nil once the counter has been
        /// taken after it.
        var armed: ArmedSpan?
        var restLeft = 0
        var reports = 0
        var activity = ActivityHistory()
        /// The last report written moved an actuator.
        var playing = false
        var closing = false
    }

    package let deviceName: String
    private let device: any ReportDevice
    private let keeper: (any SilenceKeeper)?
    private let logger: Logger
    /// The time every report is placed on, in seconds; what its timer calls `service()` by.
    private let clock: any HapticClock
    private let state = Lock(State())
    private let firstFailure = Lock<OutputFailure?>(nil)
    private let timer = Lock<(any HapticTimer)?>(nil)

    /// Streams to `device` (opened for writing); `keeper` writes the rest report if we stop writing. `clock` is
    /// `CLOCK_MONOTONIC` outside tests: the timeline of `play(_:atNanoseconds:)` and of the engine's cues.
    package init(
        device: any ReportDevice, keeper: (any SilenceKeeper)?, clock: any HapticClock = MonotonicClock(),
        logger: Logger
    ) throws(HapticEngineError) {
        self.device = device
        self.keeper = keeper
        self.clock = clock
        self.logger = logger
        deviceName = device.node
        state.withLock { state in
            state.counter = PadCounters.next(for: device.node)
            // The spacing counts from the last report of ours on the pad, whichever stream wrote it.
            state.lastWrite = PadLastWrites.last(for: device.node)
        }
        // Held weakly: a stream its owner lets go without `close()` is closed by its `deinit`, timer and all.
        let started = try clock.makeTimer { [weak self] in self?.service() }
        timer.withLock { $0 = started }
    }

    deinit { close() }

    var failure: OutputFailure? { firstFailure.withLock { $0 } }
    package var reports: Int { state.withLock { $0.reports } }
    /// Reports written so far; the stream counts no underruns (the pad holds each report's bands).
    var counts: (reports: Int, underruns: Int) { (reports, 0) }
    var activity: ActuatorActivity { state.withLock { $0.activity.latest } }
    func activity(at time: Double) -> ActuatorActivity { state.withLock { $0.activity.activity(at: time) } }
    /// How long until a report may go out (`minimumSpacingSeconds` after the last): a pattern started then is
    /// written from its first frame in a report of its own, where one started sooner would be read from where it
    /// is by then, and a tap shorter than the wait would be lost. 0 when a report may go out now.
    var startLead: Double {
        let now = self.now
        let spacing = UInt64(Self.minimumSpacingSeconds * Self.nanosecondsPerSecond)
        return state.withLock { state in
            guard let last = state.lastWrite, last + spacing > now else { return 0 }
            return Double(last + spacing - now) / Self.nanosecondsPerSecond
        }
    }

    // MARK: Sources

    package func play(_ source: Source, atNanoseconds startNanoseconds: UInt64) -> Int {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.sources[state.nextID] = Placed(source: source, start: startNanoseconds)
            state.quietUntil = nil
            return state.nextID
        }
        // A source that starts later only brings the timer's next call forward, if it comes sooner than that.
        wakeTimer(by: startNanoseconds)
        return id
    }

    package func stop(_ id: Int) {
        state.withLock { state in
            state.sources[id] = nil
            state.quietUntil = nil
        }
        wakeTimer(by: 0)
    }

    package func stop(_ id: Int, atNanoseconds nanoseconds: UInt64) {
        state.withLock { state in
            state.sources[id]?.end = nanoseconds
            state.quietUntil = nil
        }
        wakeTimer(by: 0)
    }

    /// Has the timer call `service()` by `nanoseconds` (0, or any time passed: now).
    private func wakeTimer(by nanoseconds: UInt64) {
        timer.withLock { $0 }?.wake(by: Double(nanoseconds) / Self.nanosecondsPerSecond)
    }

    // MARK: The thread

    /// Ends the stream: the timer is stopped (after its last call), the rest report is written when the actuators
    /// were playing, the guard is told nothing plays and let go, and the counter a next report would carry (past
    /// the guard's silence, when it may have written it) is left for the next stream on the node (`PadCounters`).
    /// The first call does this; later ones find nothing left to do.
    package func close() {
        state.withLock { $0.closing = true }
        let running = timer.withLock { timer -> (any HapticTimer)? in
            defer { timer = nil }
            return timer
        }
        guard let running else { return }
        running.cancel()
        finish()
        keeper?.close()
        let (next, lastWrite) = state.withLock { state in
            (Self.takeCounter(&state, now: now, keeper: keeper).counter, state.lastWrite)
        }
        PadCounters.record(next, for: device.node)
        PadLastWrites.record(lastWrite, for: device.node)
        device.close()
    }

    private static let nanosecondsPerSecond = 1e9

    /// Now on the stream's clock, in nanoseconds.
    private var now: UInt64 { MonotonicClock.nanoseconds(clock.now) }

    /// The timer's work: writes the report due now, if one is, and returns when the next is due (in the clock's
    /// seconds); nil while nothing plays, nothing waits and no rest report is owed, after a failed write, and
    /// once closing.
    private func service() -> Double? {
        // After a failed write the stream has ended: nothing more is asked for.
        guard failure == nil else { return nil }
        let now = self.now
        guard let due = state.withLock({ $0.closing ? nil : nextDue($0, now: now) }) else { return nil }
        if due <= now {
            do throws(EventDeviceError) {
                try writeUpdate(at: now)
            } catch {
                let kind: OutputFailure.Kind = error.kind == .deviceGone ? .deviceGone : .other
                firstFailure.withLock { $0 = $0 ?? OutputFailure(kind, "\(error)") }
                logger.debug("the HD rumble stream ended", metadata: ["error": "\(error)"])
                return nil
            }
            if keeper?.isGone == true {
                keeperGone()
                return nil
            }
            let after = self.now
            guard let next = state.withLock({ $0.closing ? nil : nextDue($0, now: after) }) else { return nil }
            return Double(next) / Self.nanosecondsPerSecond
        }
        return Double(due) / Self.nanosecondsPerSecond
    }

    /// When the next report is due: nil when nothing plays, nothing waits and no rest report is owed.
    private func nextDue(_ state: State, now: UInt64) -> UInt64? {
        let spacing = UInt64(Self.minimumSpacingSeconds * Self.nanosecondsPerSecond)
        let update = UInt64(Self.updateSeconds * Self.nanosecondsPerSecond)
        let earliest = state.lastWrite.map { $0 + spacing } ?? now
        let sounding = state.sources.values.contains { $0.start <= now }
        if sounding || state.restLeft > 0 {
            let last = state.lastUpdate
            var regular = last.map { $0 + update } ?? now
            if let quiet = state.quietUntil, state.restLeft == 0 || quiet < regular + update {
                regular = max(regular, quiet)
            }
            // A source that starts after the last update, by now or later, is written as soon as the spacing
            // allows rather than at the next regular update.
            let nextStart = state.sources.values.map(\.start).filter { $0 > last ?? now }.min()
            return max(earliest, min(regular, nextStart ?? regular))
        }
        guard let nextStart = state.sources.values.map(\.start).min() else { return nil }
        return max(earliest, nextStart)
    }

    /// Writes the report for the update starting at `now`: every source sounding over it, mixed per actuator.
    private func writeUpdate(at now: UInt64) throws(EventDeviceError) {
        // What sounds over the update, taken under the lock (ended sources dropped); read outside it, so that a
        // player's start (`play`) never waits for a render.
        let updateLength = UInt64(Self.updateSeconds * Self.nanosecondsPerSecond)
        let spans = state.withLock { state in
            // From where the last update's frames ended, when that is before now, but never more than an update
            // back: a thread held longer skips what it missed rather than send it late.
            let from = state.coveredUntil.map { min(now, max($0, now > updateLength ? now - updateLength : 0)) } ?? now
            state.coveredUntil = now + updateLength
            var spans: [(source: Source, frame: Int, count: Int)] = []
            for (id, placed) in state.sources {
                if let stretches = stretches(of: placed, from: from, at: now) {
                    spans += stretches
                } else if placed.start <= now {
                    state.sources[id] = nil
                }
            }
            return spans
        }
        var left: [Carrier] = []
        var right: [Carrier] = []
        for span in spans {
            var carriers = span.source.renderer.carriers(from: span.frame, count: span.count)
            if span.source.gain != 1 {
                carriers = (
                    Self.scaled(carriers.left, by: span.source.gain), Self.scaled(carriers.right, by: span.source.gain)
                )
            }
            if span.source.foldsSides {
                // The one actuator plays both sides' carriers (one list is empty at a handle's locality).
                carriers = (carriers.left + carriers.right, carriers.left + carriers.right)
            }
            left += carriers.left
            right += carriers.right
        }
        // Every source's renderer has the same map; with no source, nothing sounds on either side of any crossover.
        let crossover = spans.first?.source.renderer.crossover ?? 0
        let bands = (
            left: ActuatorBands.mixing(left, crossover: crossover),
            right: ActuatorBands.mixing(right, crossover: crossover)
        )
        let update: (report: SwitchRumbleReport, wasPlaying: Bool, exposure: ArmedSpan?)? = state.withLock { state in
            if bands.left.isSilent && bands.right.isSilent {
                let updateEnd = now + updateLength
                state.quietUntil = state.sources.values.compactMap { Self.nextVoice(of: $0, from: updateEnd) }.min()
                guard state.restLeft > 0 else {
                    state.lastUpdate = now
                    return nil
                }
                state.restLeft -= 1
            } else {
                state.quietUntil = nil
                state.restLeft = Self.restReports
            }
            let taken = Self.takeCounter(&state, now: self.now, keeper: keeper)
            state.reports += 1
            state.activity.record(Self.activity(bands.left, bands.right), at: Double(now) / Self.nanosecondsPerSecond)
            let report = SwitchRumbleReport(
                counter: taken.counter,
                frame: SwitchRumbleFrame(left: Self.actuator(bands.left), right: Self.actuator(bands.right)))
            let wasPlaying = state.playing
            state.playing = !report.frame.left.isAtRest || !report.frame.right.isAtRest
            return (report, wasPlaying, taken.exposure)
        }
        guard case (var report, let wasPlaying, var exposure)? = update else { return }
        let playing = !report.frame.left.isAtRest || !report.frame.right.isAtRest
        // The guard hears of a report before it is written, armed while either this report or the one before
        // moves an actuator: a process killed between the two leaves a guard that still puts the pad at rest.
        var beat: UInt64
        var silence: [UInt8]
        while true {
            silence = SwitchRumbleReport.rest(counter: report.counter &+ 1).bytes
            beat = self.now
            keeper?.heartbeat(armed: playing || wasPlaying, silence: silence)
            // The counter was taken before this heartbeat went out. If the thread stood still in between for so
            // long that the keeper may have written, before hearing this heartbeat, the silence it was sent last
            // (which carries this same counter), the report takes the next counter and the keeper is told again.
            // That heartbeat's silence can in turn have been written only if the thread stood still as long again.
            guard let keeper, let armed = exposure, keeper.timeoutNanoseconds > Self.keeperMarginNanoseconds,
                Self.keeperMayHaveWritten(
                    armedAt: armed.since, disarmedAt: armed.until, now: self.now,
                    timeout: keeper.timeoutNanoseconds)
            else { break }
            report = SwitchRumbleReport(counter: report.counter &+ 1, frame: report.frame)
            state.withLock { $0.counter &+= 1 }
            exposure = playing || wasPlaying ? ArmedSpan(since: beat, until: nil) : nil
        }
        try device.write(report.bytes)
        // The spacing counts from the write, not from the update's start: rendering the update took a while.
        let written = self.now
        if wasPlaying, !playing { keeper?.heartbeat(armed: false, silence: silence) }
        if playing, let keeper, keeper.timeoutNanoseconds > Self.keeperMarginNanoseconds,
            Self.keeperMayHaveWritten(armedAt: beat, disarmedAt: nil, now: written, timeout: keeper.timeoutNanoseconds)
        {
            // The write was held up so long that the keeper may have written its silence meanwhile and gone quiet,
            // and the report, landing after it, moves the actuators: the keeper is armed again now rather than at
            // the next report, with the same silence (one past the report's counter, as the pad last got it), so
            // a process killed in between still leaves the pad at rest.
            beat = self.now
            keeper.heartbeat(armed: true, silence: silence)
        }
        state.withLock { state in
            state.lastWrite = written
            state.lastUpdate = written
            if playing || wasPlaying { state.armed = ArmedSpan(since: beat, until: playing ? nil : written) }
        }
    }

    /// The counter of the report about to be written at `now`, advanced past it: skipping the next one when the
    /// keeper may have written its silence with it since the last heartbeat (`keeperMayHaveWritten`), so that no
    /// two reports the pad gets in a row carry the same counter. `exposure` is the armed span whose silence carries
    /// the counter taken, when it was not skipped: the keeper may still write that silence until it hears of the
    /// report.
    private static func takeCounter(
        _ state: inout State, now: UInt64, keeper: (any SilenceKeeper)?
    ) -> (counter: UInt8, exposure: ArmedSpan?) {
        var exposure = state.armed
        if let armed = state.armed, let keeper,
            keeperMayHaveWritten(
                armedAt: armed.since, disarmedAt: armed.until, now: now, timeout: keeper.timeoutNanoseconds)
        {
            state.counter &+= 1
            exposure = nil
        }
        state.armed = nil
        defer { state.counter &+= 1 }
        return (state.counter, exposure)
    }

    /// Whether a keeper armed by a heartbeat at `armedAt` (and disarmed at `disarmedAt`, nil while still armed)
    /// may have written its silence by `now`: armed for `keeperMarginNanoseconds` short of its `timeout` or longer.
    /// The keeper counts its timeout from when it reads the heartbeat, never before it was sent.
    package static func keeperMayHaveWritten(
        armedAt: UInt64, disarmedAt: UInt64?, now: UInt64, timeout: UInt64
    ) -> Bool {
        let end = disarmedAt ?? now
        return end >= armedAt && end - armedAt + keeperMarginNanoseconds >= timeout
    }

    /// Where `placed` is in the update starting at `now`, its frames read from `from` (no later than `now`) to
    /// an update after `now`: its source, and each stretch of frames it sounds for (a loop that comes round
    /// inside the update gives one stretch to its end and one from its start); nil when it has not started yet,
    /// or has ended (by its stop, or its pattern's end).
    private func stretches(of placed: Placed, from: UInt64, at now: UInt64)
        -> [(source: Source, frame: Int, count: Int)]?
    {
        guard placed.start <= now else { return nil }
        if let end = placed.end, end <= now { return nil }
        let renderer = placed.source.renderer
        let framesPerNanosecond = BandRenderer.sampleRate / Self.nanosecondsPerSecond
        let first = max(from, placed.start)
        var frame = placed.source.offsetFrame + Int(Double(first - placed.start) * framesPerNanosecond)
        var last = now + UInt64(Self.updateSeconds * Self.nanosecondsPerSecond)
        if let end = placed.end { last = min(last, end) }
        var count = max(1, Int(Double(last - first) * framesPerNanosecond))
        guard let loop = placed.source.loop else {
            return frame < renderer.endFrame ? [(placed.source, frame, count)] : nil
        }
        var pass = loop.pass(containing: frame)
        frame -= loop.start(ofPass: pass)
        var stretches: [(source: Source, frame: Int, count: Int)] = []
        while count > 0 {
            let taken = min(count, loop.length(ofPass: pass) - frame)
            stretches.append((placed.source, frame, taken))
            count -= taken
            frame = 0
            pass += 1
        }
        return stretches
    }

    /// How far ahead a voice is looked for: 2^63 ns, about 292 years.
    private static let farthestVoiceNanoseconds = 9_223_372_036_854_775_808.0

    /// When a voice of `placed` is next under way from `time` on (`time` itself when one is; looping round when it
    /// loops), or its stop when that comes first; nil when it starts after `time`, or no voice of it sounds again.
    private static func nextVoice(of placed: Placed, from time: UInt64) -> UInt64? {
        guard placed.start <= time else { return nil }
        let framesPerNanosecond = BandRenderer.sampleRate / Self.nanosecondsPerSecond
        let waveform = placed.source.renderer.waveform
        let frame = placed.source.offsetFrame + Int(Double(time - placed.start) * framesPerNanosecond)
        let ahead: Int
        if let loop = placed.source.loop {
            let pass = loop.pass(containing: frame)
            let inLoop = frame - loop.start(ofPass: pass)
            let length = loop.length(ofPass: pass)
            if let next = waveform.firstVoiceFrame(atOrAfter: inLoop), next < length {
                ahead = next - inLoop
            } else if let first = waveform.firstVoiceFrame(atOrAfter: 0),
                let holding = loop.firstPass(from: pass + 1, longerThan: first)
            {
                // The first pass that holds the loop's first voice: the next, unless the voice starts on the
                // shorter passes' last frame (until 7 December a stream with a stop ahead then slept to the stop).
                ahead = loop.start(ofPass: holding) - loop.start(ofPass: pass) - inLoop + first
            } else {
                return placed.end
            }
        } else {
            guard let next = waveform.firstVoiceFrame(atOrAfter: frame) else { return placed.end }
            ahead = next - frame
        }
        // A voice further off than the clock counts (a loop of any finite length is taken, a trillion seconds
        // too) never comes: converted, it would stop the process (it did until 7 December).
        let nanoseconds = (Double(ahead) / framesPerNanosecond).rounded(.up)
        guard nanoseconds < Self.farthestVoiceNanoseconds else { return placed.end }
        let (voice, overflow) = time.addingReportingOverflow(UInt64(nanoseconds))
        return overflow ? placed.end : min(voice, placed.end ?? .max)
    }

    /// The keeper was found gone (killed, or its channel broken) by the heartbeat of the report just written: a
    /// process killed from now on would leave the pad playing its last frame. The actuators are put at rest and the
    /// stream ends, its failure the engine's to hear; opening the pad again starts a new keeper.
    private func keeperGone() {
        finish()
        firstFailure.withLock {
            $0 =
                $0
                ?? OutputFailure(
                    .other,
                    "the silence guard of \(deviceName) is gone: without it a killed process would leave the pad "
                        + "vibrating, so the HD rumble stream was put at rest and ended")
        }
        logger.notice(
            "the silence guard is gone; the HD rumble stream ended at rest", metadata: ["node": "\(deviceName)"])
    }

    /// At the end: the actuators are put at rest when the last report left them playing.
    private func finish() {
        let rest = state.withLock { state -> SwitchRumbleReport? in
            guard state.playing else { return nil }
            state.playing = false
            state.restLeft = 0
            state.activity.record(.atRest, at: clock.now)
            return .rest(counter: Self.takeCounter(&state, now: now, keeper: keeper).counter)
        }
        if let rest {
            // Written before the keeper hears of it, so that it stays armed until the pad is at rest. Should the
            // keeper write its silence in between, the pad gets the same rest twice.
            try? device.write(rest.bytes)
            let written = now
            state.withLock { $0.lastWrite = written }
            keeper?.heartbeat(armed: false, silence: SwitchRumbleReport.rest(counter: rest.counter &+ 1).bytes)
        }
    }

    /// `carriers` with every amplitude scaled by `gain`.
    static func scaled(_ carriers: [Carrier], by gain: Double) -> [Carrier] {
        carriers.map { Carrier(frequency: $0.frequency, amplitude: $0.amplitude * gain) }
    }

    static func actuator(_ bands: ActuatorBands) -> SwitchRumbleActuator {
        SwitchRumbleActuator(
            low: .init(frequency: bands.low.frequency, amplitude: bands.low.amplitude),
            high: .init(frequency: bands.high.frequency, amplitude: bands.high.amplitude))
    }

    /// Each actuator's louder band, and the frequency of the loudest band of all.
    static func activity(_ left: ActuatorBands, _ right: ActuatorBands) -> ActuatorActivity {
        let all = [left.low, left.high, right.low, right.high]
        let loudest = all.max { $0.amplitude < $1.amplitude }
        return ActuatorActivity(
            left: max(left.low.amplitude, left.high.amplitude), right: max(right.low.amplitude, right.high.amplitude),
            frequency: (loudest?.amplitude ?? 0) > 0 ? loudest?.frequency : nil)
    }
}

/// An engine's membership of its pad's HD rumble stream (`HDRumbleStream`, one per pad in this process, by hidraw
/// node): the engine's players' cues as sources on it, at the engine's locality and gain.
package final class HDRumbleMember: PatternStream {
    /// The pad's stream, which this engine is a member of.
    package let stream: HDRumbleStream
    private let locality: HapticLocality
    /// Both sides carry this engine's carriers: a lone Joy-Con (one actuator) played at a handle's locality.
    private let foldsSides: Bool
    /// The engine's gain, 0...1: every amplitude of its sources is scaled by it before the mix.
    private let gain: Double
    private let sounds = Lock(CueSounds<HDRumbleStream>())
    private let closed = Atomic<Bool>(false)

    /// The streams by hidraw node, while they have members.
    private static let streams = PadShares<HDRumbleStream>()

    private init(stream: HDRumbleStream, locality: HapticLocality, mirrorsSides: Bool, gain: Double) {
        self.stream = stream
        self.locality = locality
        foldsSides = mirrorsSides && locality != .all
        self.gain = PureMath.unitClamped(gain)
    }

    /// Ends this engine's part, if it was not ended yet: the stream is left by an engine that let it go without.
    deinit { close() }

    /// A member of the pad's stream under `node`: the stream this process already has there (unless it has
    /// ended), or the one `make` starts (the hidraw node opened and its silence guard started only then).
    /// `mirrorsSides` for a pad with one actuator (a lone Joy-Con); `gain` (0...1) scales this engine's
    /// amplitudes.
    package static func joining(
        _ node: String, locality: HapticLocality, mirrorsSides: Bool = false, gain: Double = 1,
        make: () throws(OutputFailure) -> HDRumbleStream
    ) throws(OutputFailure) -> HDRumbleMember {
        let stream = try streams.joined(node, isUsable: { $0.failure == nil }, make: make)
        return HDRumbleMember(stream: stream, locality: locality, mirrorsSides: mirrorsSides, gain: gain)
    }

    package var deviceName: String { stream.deviceName }
    package var failure: OutputFailure? { stream.failure }
    var counts: (reports: Int, underruns: Int) { stream.counts }
    var activity: ActuatorActivity { stream.activity }
    func activity(at time: Double) -> ActuatorActivity { stream.activity(at: time) }
    var startLead: Double { stream.startLead }

    /// Ends this engine's part: its sources stop at once. The stream ends (its actuators put at rest, its guard let
    /// go and its node closed) with its last member.
    package func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        sounds.withLock { $0.stopAll(on: stream) }
        Self.streams.leave(stream) { $0.close() }
    }

    /// Plays `pattern` once from its start at `startNanoseconds`, on its own (the kernel tests' direct path).
    package func play(_ pattern: HapticPattern, atNanoseconds startNanoseconds: UInt64) {
        let source = source(BandRenderer(pattern: pattern, locality: locality), offset: 0, loopLength: nil)
        sounds.startAlone(source, atNanoseconds: startNanoseconds, on: stream) { !closed.load(ordering: .relaxed) }
    }

    /// Makes the stream play what `players` ask for from `now`, as the voice coils' stream does.
    func sync(_ players: [PlayerID: WaveformPlayer], now: Double) {
        guard !closed.load(ordering: .relaxed) else { return }
        sounds.follow(players, now: now, on: stream, isOpen: { !closed.load(ordering: .relaxed) }) {
            waveform, cue, start in
            let renderer = BandRenderer(
                pattern: waveform.pattern, controls: cue.controls, playbackRate: cue.anchor.rate,
                locality: locality)
            return source(renderer, offset: cue.anchor.offset(at: start), loopLength: cue.anchor.loopLength)
        }
    }

    private func source(_ renderer: BandRenderer, offset: Double, loopLength: Double?) -> HDRumbleStream.Source {
        HDRumbleStream.Source(
            renderer: renderer, offset: offset, loopLength: loopLength, gain: gain, foldsSides: foldsSides)
    }
}
