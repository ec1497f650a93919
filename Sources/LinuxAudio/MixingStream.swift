import AudioRendering
@_spi(Internals) public import LinuxSystem
public import Logging
import Synchronization

/// One output fed without a break by a thread of its own, mixing every sound playing on it: each starts at a
/// chosen `CLOCK_MONOTONIC` moment (placed to the frame through the times the output gives) or at once,
/// and its gain can glide (`fade`) along the equal-power curve, so that two sounds cross-fade at constant power.
/// Silence is written while nothing plays, so the device's clock never stops.
///
/// A failed write (the device gone) ends the thread: `failure` says why and `onFailure` is called once.
public final class MixingStream: Sendable {
    /// A sound playing on the stream.
    public struct SoundID: Hashable, Sendable {
        let value: Int
    }

    fileprivate enum Command: Sendable {
        case play(SoundID, any SoundSource, start: UInt64?, gain: Double)
        case fade(SoundID, to: Double, seconds: Double, thenStop: Bool)
        case stop(SoundID)
        case end(SoundID, at: UInt64)
    }

    private struct Shared: Sendable {
        var commands: [Command] = []
        var active: Set<SoundID> = []
        /// What to call when each of these sounds ends (`whenEnded`).
        var endHandlers: [SoundID: [@Sendable () -> Void]] = [:]
        var failure: AudioDeviceError?
        var interrupted = false
        /// The `CLOCK_MONOTONIC` moment from which a sound played now is placed exactly (see `earliestStart`).
        var earliestStart: UInt64?
        /// Whether the thread waits in `idle`, writing nothing.
        var idle = false

        /// Every end handler, taken.
        mutating func takeEndHandlers() -> [@Sendable () -> Void] {
            defer { endHandlers = [:] }
            return endHandlers.values.flatMap { $0 }
        }
    }

    /// How a stream mixes and paces, beyond what its output says. The defaults are a sound card's: periods of at
    /// least `AudioMixer.controlFrames`, no limiter of the shape's own, the buffer primed with silence, silence
    /// written while nothing plays so the device's clock never stops. Every stream keeps its mix within full scale
    /// with a `PeakLimiter`, after the shape's limiter, where a clip cut its peaks off flat.
    public struct Shape: Sendable {
        /// Periods are the output's, but never shorter than this (nil: `AudioMixer.controlFrames`, the step at
        /// which a pattern's sound reads its controls).
        public var minimumPeriodFrames: Int
        /// Applied to every mixed sample before the `PeakLimiter` (a soft limiter's curve); nil: none.
        public var limiter: (@Sendable (Float) -> Float)?
        /// A fresh stream fills the output's buffer with silence before its first period. Without it, the
        /// first periods are written as fast as the output takes them, sounds and all: for outputs whose
        /// buffer is a queue that plays from the first frame it gets (a controller's), where priming would only
        /// delay every start.
        public var primesWithSilence: Bool
        /// Once a silent period has followed the last sound and nothing sounds within the output's buffer and a
        /// period from now, the thread stops writing until a sound is played (or one played comes that near):
        /// for devices that fall silent by themselves when their queue runs dry, and where a write costs
        /// something (a report over a radio link). What was queued plays out meanwhile; the next sound follows
        /// it, or starts a fresh stream once it has played out. For outputs that are not primed with silence.
        public var idlesWhenSilent: Bool

        public init(
            minimumPeriodFrames: Int? = nil, limiter: (@Sendable (Float) -> Float)? = nil,
            primesWithSilence: Bool = true, idlesWhenSilent: Bool = false
        ) {
            self.minimumPeriodFrames = max(1, minimumPeriodFrames ?? AudioMixer.controlFrames)
            self.limiter = limiter
            self.primesWithSilence = primesWithSilence
            self.idlesWhenSilent = idlesWhenSilent
        }

        /// A sound card's stream.
        public static let soundCard = Shape()
    }

    /// Opens the output again after its device went away.
    public typealias Reopen = @Sendable () throws(AudioDeviceError) -> any AudioOutput

    private let writer: Writer
    private let nextID = Atomic<Int>(0)
    /// The output's latency when the stream started (the device's, after a reopen, is alike).
    public let latency: AudioLatency
    /// The output's rate, which sources played on the stream must have.
    public let sampleRate: Int
    private let thread = Lock<ServiceThread?>(nil)
    private var shape: Shape { writer.shape }

    /// Starts feeding `output`. A failed write ends the stream: `onFailure` is called on its thread.
    public init(
        output: any AudioOutput, shape: Shape = .soundCard, logger: Logger,
        onFailure: @escaping @Sendable (AudioDeviceError) -> Void = { _ in }
    ) throws(SystemCallError) {
        latency = output.latency
        sampleRate = output.sampleRate
        writer = Writer(shape: shape)
        try start(output, reopen: nil, logger: logger, onFailure: onFailure, onInterruption: { _ in })
    }

    /// Starts feeding `output`, and when its device goes away (`isDeviceMissing`) waits for it and feeds the
    /// output `reopen` makes, trying again after 0.1 s, doubling up to 2 s: `isInterrupted` holds meanwhile
    /// and `onInterruption` is called with true, then false when sound flows again. The sounds wait with it
    /// (paused, not advanced). Any other failure ends the stream as with `init(output:)`.
    public init(
        output: any AudioOutput, reopen: @escaping Reopen, logger: Logger,
        onInterruption: @escaping @Sendable (Bool) -> Void = { _ in },
        onFailure: @escaping @Sendable (AudioDeviceError) -> Void = { _ in }
    ) throws(SystemCallError) {
        latency = output.latency
        sampleRate = output.sampleRate
        writer = Writer(shape: .soundCard)
        try start(output, reopen: reopen, logger: logger, onFailure: onFailure, onInterruption: onInterruption)
    }

    private func start(
        _ output: any AudioOutput, reopen: Reopen?, logger: Logger,
        onFailure: @escaping @Sendable (AudioDeviceError) -> Void, onInterruption: @escaping @Sendable (Bool) -> Void
    ) throws(SystemCallError) {
        // The thread holds the writer, not the stream: a stream its owner lets go of without `close()` is
        // closed by its deinit, which a thread holding the stream would keep from ever running.
        let started = try ServiceThread.start { [writer] in
            writer.run(output, reopen: reopen, logger: logger, onFailure: onFailure, onInterruption: onInterruption)
        }
        thread.withLock { $0 = started }
    }

    /// What the stream's thread works with: the commands posted to it and what it reports, its wake-up, and
    /// whether it is to end.
    private final class Writer: Sendable {
        let shared = Lock(Shared())
        let closing = Atomic<Bool>(false)
        /// Set by `close(closingOutput: true)`: the thread closes the output it feeds as it ends.
        let closesOutput = Atomic<Bool>(false)
        let wake = DeadlineWaiter()
        let shape: Shape

        init(shape: Shape) { self.shape = shape }

        /// The thread's life: feeds `output` until the stream closes or it fails; a device gone is waited for when
        /// it can be opened again (`reopen`).
        func run(
            _ output: any AudioOutput, reopen: Reopen?, logger: Logger,
            onFailure: @escaping @Sendable (AudioDeviceError) -> Void,
            onInterruption: @escaping @Sendable (Bool) -> Void
        ) {
            var mixing = Mixing(output: output, shape: shape)
            defer { if closesOutput.load(ordering: .acquiring) { mixing.output.close() } }
            while !closing.load(ordering: .relaxed) {
                do throws(AudioDeviceError) {
                    try feed(&mixing)
                } catch {
                    guard let reopen, error.isDeviceMissing else {
                        logger.warning("audio stream stopped by its output", metadata: ["error": "\(error)"])
                        let handlers = shared.withLock { shared in
                            shared.failure = error
                            shared.active = []
                            return shared.takeEndHandlers()
                        }
                        for handler in handlers { handler() }
                        onFailure(error)
                        return
                    }
                    logger.notice("sound device gone; the audio stream waits for it", metadata: ["error": "\(error)"])
                    mixing.output.close()
                    shared.withLock { $0.interrupted = true }
                    onInterruption(true)
                    guard let output = waitForDevice(reopen) else { return }
                    mixing.replace(output)
                    shared.withLock { $0.interrupted = false }
                    logger.notice("sound device back; the audio stream plays on")
                    onInterruption(false)
                }
            }
        }

        /// Mixes and writes period after period until closed or a write fails.
        private func feed(_ mixing: inout Mixing) throws(AudioDeviceError) {
            while !closing.load(ordering: .relaxed) {
                let commands = shared.withLock { shared in
                    defer { shared.commands = [] }
                    return shared.commands
                }
                let stopped = mixing.apply(commands)
                if !stopped.isEmpty { self.ended(stopped) }
                if shape.idlesWhenSilent, mixing.silentSinceLastSound,
                    let quiet = mixing.quietUntil(now: MonotonicTime.nanoseconds())
                {
                    idle(&mixing, until: quiet)
                    continue
                }
                let ended = try mixing.writeNextPeriod()
                // A command posted from now on may miss the period after the one just written (the thread may be
                // mixing it already), so the exact moment a new sound can start is one period later still.
                let earliest = mixing.nextHeard.map { $0 + mixing.periodNanoseconds }
                shared.withLock { $0.earliestStart = earliest }
                if !ended.isEmpty { self.ended(ended) }
            }
        }

        /// `sounds` are over: no longer active, and what waited for their end is called (here, unlocked).
        func ended(_ sounds: Set<SoundID>) {
            let handlers = shared.withLock { shared in
                shared.active.subtract(sounds)
                return sounds.flatMap { shared.endHandlers.removeValue(forKey: $0) ?? [] }
            }
            for handler in handlers { handler() }
        }

        /// Waits, writing nothing, until a change is posted, the stream closes, or `until` (`Mixing.quietUntil`:
        /// `UInt64.max` for no time, only a change). What was written plays out meanwhile: a sound placed from its end on is
        /// heard to the frame (`earliestStart`), the next period following it; once it has played out, the next
        /// period starts a fresh stream (its first frame heard when it is written).
        private func idle(_ mixing: inout Mixing, until wakeUp: UInt64) {
            let queueEnd = mixing.nextHeard
            mixing.nextHeard = nil
            shared.withLock {
                $0.earliestStart = queueEnd
                $0.idle = true
            }
            while !closing.load(ordering: .relaxed), shared.withLock({ $0.commands.isEmpty }) {
                if wakeUp != .max, MonotonicTime.nanoseconds() >= wakeUp { break }
                wake.wait(untilNanoseconds: wakeUp == .max ? nil : wakeUp)
            }
            shared.withLock { $0.idle = false }
            if let queueEnd, queueEnd > MonotonicTime.nanoseconds() { mixing.nextHeard = queueEnd }
        }

        /// Tries `reopen` until it succeeds (the output) or the stream is closed (nil).
        private func waitForDevice(_ reopen: Reopen) -> (any AudioOutput)? {
            var pause: UInt64 = 100_000_000
            while !closing.load(ordering: .relaxed) {
                wake.wait(untilNanoseconds: MonotonicTime.nanoseconds() + pause)
                guard !closing.load(ordering: .relaxed) else { return nil }
                if let output = try? reopen() { return output }
                pause = min(pause * 2, 2_000_000_000)
            }
            return nil
        }
    }

    /// Whether the stream waits for its device to come back.
    public var isInterrupted: Bool { writer.shared.withLock { $0.interrupted } }

    /// Whether the stream's thread idles (`Shape.idlesWhenSilent`): it writes nothing until a change is posted,
    /// the stream closes, or the first sound placed ahead is near. What it wrote before is all there is until then.
    package var isIdle: Bool { writer.shared.withLock { $0.idle } }

    /// The most a late start is made up for by skipping into the sound, in seconds; a start further in the past
    /// plays the sound from its beginning, now.
    public static let latestSkip: Double = 10

    /// A gain as the mix takes it: one that is not a finite number is silence. (A NaN made every sound of the
    /// stream NaN, silencing them all, and an infinity played full scale, until 6 December.)
    static func usable(_ gain: Double) -> Double { gain.isFinite ? gain : 0 }

    /// `frames` at `rate` frames a second, in nanoseconds (rounded down), for as many frames as a sound can play:
    /// the product with 10⁹ is taken at full width, since in 64 bits it overflows once a sound has played about
    /// 4.4 days at 48 kHz (a looping track crashed the process then, until 6 December).
    static func nanoseconds(frames: Int, rate: Int) -> UInt64 {
        let product = UInt64(frames).multipliedFullWidth(by: 1_000_000_000)
        return UInt64(rate).dividingFullWidth(product).quotient
    }

    /// How much further behind the clock than it started a sound played whole (`playsWholeWhenLate`) may fall
    /// mid-sound, in seconds, before it skips back: past the stalls of a loaded machine (tens of milliseconds),
    /// which it plays through whole and ends as much later, and short of what a stopped process leaves.
    public static let latestWholeCatchUp: Double = 0.2

    /// How far behind the clock a sound in step with haptics (one not played whole) may fall mid-sound, in
    /// seconds, before it skips what it lost: past the jitter of where a device says its next frame is heard (up
    /// to a period of a device whose position moves a period at a time), and within what is still felt as the
    /// same moment as a touch. A writer that stood still long enough for the device to run dry (an underrun)
    /// leaves the sound this much behind, at most, for the rest of it.
    public static let latestDrift: Double = 0.02

    /// Plays `source` at `gain` (not a finite number: silence) so that its first frame is heard at
    /// `startNanoseconds` (`CLOCK_MONOTONIC`), or as soon as it can be when that is nil. A start the output's
    /// queue makes too early is kept by skipping into the sound (up to `latestSkip`): its time t is heard at
    /// start + t, as a sound started with haptics must be; a source that `playsWholeWhenLate` is played from its
    /// first frame as soon as it can be instead.
    @discardableResult
    public func play(_ source: some SoundSource, at startNanoseconds: UInt64? = nil, gain: Double = 1) -> SoundID {
        let id = newID()
        post(CollectionOfOne(.play(id, source, start: startNanoseconds, gain: gain)))
        return id
    }

    /// Glides the sound's gain to `gain` (not a finite number: silence) over `seconds` from the next period on,
    /// along `from·cos(p·π/2) + to·sin(p·π/2)` (`EqualPower.crossFade`): a fade-out and a fade-in of the same
    /// length that start on the same frame keep the power constant, which only changes made `together` are sure
    /// to. With `thenStop` the sound ends when the glide does.
    public func fade(_ id: SoundID, to gain: Double, over seconds: Double, thenStop: Bool = false) {
        post(CollectionOfOne(.fade(id, to: gain, seconds: seconds, thenStop: thenStop)))
    }

    /// Ends the sound at the next period.
    public func stop(_ id: SoundID) {
        post(CollectionOfOne(.stop(id)))
    }

    /// Ends the sound so that its last frame is heard just before `nanoseconds` (`CLOCK_MONOTONIC`), to the frame
    /// when that moment is still ahead of what the output has queued, else at the next period. A sound played
    /// whole (`playsWholeWhenLate`) that runs late, from a late start or because the stream's writer fell behind
    /// its output while it played, ends that much later, so that it keeps the length it was given; one that fell
    /// behind mid-sound by more than `latestWholeCatchUp` skips that part back instead.
    public func stop(_ id: SoundID, atNanoseconds nanoseconds: UInt64) {
        post(CollectionOfOne(.end(id, at: nanoseconds)))
    }

    /// Changes made together (`together(_:)`): what `play`, `fade` and `stop` do, held until `make` returns.
    public struct Changes {
        fileprivate let stream: MixingStream
        fileprivate var commands: [Command] = []

        /// `MixingStream.play(_:at:gain:)`, with the other changes: its id is the sound's from now on.
        @discardableResult
        public mutating func play(_ source: some SoundSource, at startNanoseconds: UInt64? = nil, gain: Double = 1)
            -> SoundID
        {
            let id = stream.newID()
            commands.append(.play(id, source, start: startNanoseconds, gain: gain))
            return id
        }

        /// `MixingStream.fade(_:to:over:thenStop:)`, with the other changes.
        public mutating func fade(_ id: SoundID, to gain: Double, over seconds: Double, thenStop: Bool = false) {
            commands.append(.fade(id, to: gain, seconds: seconds, thenStop: thenStop))
        }

        /// `MixingStream.stop(_:)`, with the other changes.
        public mutating func stop(_ id: SoundID) {
            commands.append(.stop(id))
        }

        /// `MixingStream.stop(_:atNanoseconds:)`, with the other changes.
        public mutating func stop(_ id: SoundID, atNanoseconds nanoseconds: UInt64) {
            commands.append(.end(id, at: nanoseconds))
        }
    }

    /// Makes the changes `make` makes all at once: the stream's thread takes them before the same period, so
    /// that a fade-out and a fade-in made together begin on the same frame (a cross-fade at constant power), and
    /// a sound played with a fade of its own is never heard without it. Calls made one after another may
    /// straddle a period: the thread takes what was posted whenever it starts one. Nothing reaches the stream
    /// when `make` throws.
    @discardableResult
    public func together<Result, Failure: Error>(_ make: (inout Changes) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        var changes = Changes(stream: self)
        let result = try make(&changes)
        post(changes.commands)
        return result
    }

    private func newID() -> SoundID {
        SoundID(value: nextID.wrappingAdd(1, ordering: .relaxed).oldValue)
    }

    /// Hands `commands` to the thread in one go; nothing once the stream has failed (its thread is gone).
    private func post(_ commands: some Collection<Command>) {
        let posted = writer.shared.withLock { shared in
            guard shared.failure == nil else { return false }
            for case .play(let id, _, _, _) in commands { shared.active.insert(id) }
            shared.commands.append(contentsOf: commands)
            return !commands.isEmpty
        }
        // An idle thread waits for changes (a stop of a sound it waits to start, too).
        if posted, shape.idlesWhenSilent { writer.wake.signal() }
    }

    /// The earliest `CLOCK_MONOTONIC` moment a sound played now can start at exactly (to the frame): the output's
    /// queue and one period; nil until the stream has written its first period. A start placed earlier is
    /// still kept in time by skipping into the sound (`play(_:at:gain:)`), so what comes before this moment
    /// is not heard.
    public var earliestStart: UInt64? { writer.shared.withLock { $0.earliestStart } }

    /// How far ahead of now a sound must be placed to be heard whole: what `earliestStart` says, or, before the
    /// first period is written, the output's buffer and two periods (nothing for a stream that is not primed
    /// with silence: its first period is heard when it is written).
    public var leadNanoseconds: UInt64 {
        let now = MonotonicTime.nanoseconds()
        if let earliest = earliestStart { return earliest > now ? earliest - now : 0 }
        guard shape.primesWithSilence else { return 0 }
        return UInt64((latency.bufferSeconds + 2 * latency.periodSeconds) * 1e9)
    }

    /// Whether the sound has not ended yet (queued, waiting for its start, or playing).
    public func isActive(_ id: SoundID) -> Bool { writer.shared.withLock { $0.active.contains(id) } }

    /// Calls `handler` once when the sound ends (its last frame written, stopped, or the stream failed or closed):
    /// on the stream's thread, or at once on the caller's when it has ended already. It should not block: the
    /// stream's next period waits for it.
    public func whenEnded(_ id: SoundID, _ handler: @escaping @Sendable () -> Void) {
        let waits = writer.shared.withLock { shared in
            guard shared.active.contains(id) else { return false }
            shared.endHandlers[id, default: []].append(handler)
            return true
        }
        if !waits { handler() }
    }

    /// Why the stream stopped, when its output failed.
    public var failure: AudioDeviceError? { writer.shared.withLock { $0.failure } }

    /// Stops the thread after the period it is writing and waits for it. The output stays open (its owner's)
    /// unless `closingOutput`: then the output the stream feeds last (the one it was given, or the one `reopen`
    /// made after the device came back) is closed as the thread ends.
    public func close(closingOutput: Bool = false) {
        if closingOutput { writer.closesOutput.store(true, ordering: .releasing) }
        writer.closing.store(true, ordering: .relaxed)
        writer.wake.signal()
        thread.joinUnlessCurrent()
        // Closed, no sound plays on: what waited for one to end hears that it has.
        let handlers = writer.shared.withLock { shared in
            shared.active = []
            return shared.takeEndHandlers()
        }
        for handler in handlers { handler() }
    }

    deinit { close() }

    /// The stream thread's own state: the sounds and the time of the next frame.
    private struct Mixing {
        struct Playing {
            let id: SoundID
            var source: any SoundSource
            var start: UInt64?
            var glide: Glide
            var stopsAfterGlide = false
            /// When its last frame is heard (`stop(_:atNanoseconds:)`), before `lateness`.
            var end: UInt64?
            /// How late a sound played whole runs behind the clock, at most so far (a late start, or a writer that
            /// fell behind its output while it played): its end moves as late.
            var lateness: UInt64 = 0
            /// For a sound played whole: how late its first frame was heard, which it keeps to its end.
            var startLateness: UInt64?
            /// When its first frame was due (its start, or the moment it was first heard when it had none or
            /// started too late to skip into), and how many of its frames were mixed or skipped since: frame k
            /// is due at origin + k, which a writer that falls behind its output shows the sound late against.
            var origin: UInt64?
            var framesMixed = 0
        }

        /// A gain moving from `from` to `to` over `frames` frames from stream frame `first`.
        struct Glide {
            var from: Double
            var to: Double
            var first = 0
            var frames = 0

            func gain(atFrame frame: Int) -> Double {
                guard frames > 0, frame < first + frames else { return to }
                let weights = EqualPower.crossFade(progress: Double(max(frame - first, 0)) / Double(frames))
                return from * weights.outgoing + to * weights.incoming
            }

            func isOver(atFrame frame: Int) -> Bool { frame >= first + frames }
        }

        var output: any AudioOutput
        let shape: Shape
        var period: Int
        var playing: [Playing] = []
        /// Keeps the mix within full scale, at the output's rate.
        var limiter: PeakLimiter
        /// Frames written so far, and when the next one will be heard.
        var written = 0
        var nextHeard: UInt64?
        /// No sound had a frame in the last period written (or none has been written yet): a sound that ended,
        /// or was stopped, at that period's first frame left it silent.
        var silentSinceLastSound = true

        var periodNanoseconds: UInt64 { UInt64(period) * 1_000_000_000 / UInt64(output.sampleRate) }

        /// For a stream that may idle: until when nothing sounds, from `now` on, when every sound waits for a
        /// start further ahead than the output's buffer and a period (what a running stream keeps ahead: the
        /// stream then wakes with that lead before the first); `.max` when nothing plays; nil when a sound is
        /// due sooner, or plays.
        func quietUntil(now: UInt64) -> UInt64? {
            let lead = UInt64(output.latency.bufferFrames + period) * 1_000_000_000 / UInt64(output.sampleRate)
            var first = UInt64.max
            for sound in playing {
                guard let start = sound.start, start > now + lead else { return nil }
                first = min(first, start - lead)
            }
            return first
        }

        init(output: any AudioOutput, shape: Shape) {
            self.output = output
            self.shape = shape
            period = max(output.latency.periodFrames, shape.minimumPeriodFrames)
            limiter = PeakLimiter(sampleRate: Double(output.sampleRate))
        }

        /// Goes on on `output` (the device back): its own period, and its own clock for the next frame. The
        /// sounds waited through the interruption, paused: each takes the moment its next frame is heard for its
        /// new origin, so that the time the device was gone is not taken for a writer that fell behind.
        mutating func replace(_ output: any AudioOutput) {
            self.output = output
            period = max(output.latency.periodFrames, shape.minimumPeriodFrames)
            limiter = PeakLimiter(sampleRate: Double(output.sampleRate))
            nextHeard = nil
            for index in playing.indices where playing[index].start == nil {
                playing[index].origin = nil
                playing[index].framesMixed = 0
                playing[index].startLateness = nil
            }
        }

        /// Applies the commands in order; returns the sounds stopped.
        mutating func apply(_ commands: [Command]) -> Set<SoundID> {
            var stopped: Set<SoundID> = []
            for command in commands {
                switch command {
                case .play(let id, let source, let start, let gain):
                    let gain = MixingStream.usable(gain)
                    playing.append(Playing(id: id, source: source, start: start, glide: Glide(from: gain, to: gain)))
                case .fade(let id, let gain, let seconds, let thenStop):
                    guard let index = playing.firstIndex(where: { $0.id == id }) else { continue }
                    let current = playing[index].glide.gain(atFrame: written)
                    let frames = FrameCount.of(seconds, at: Double(output.sampleRate))
                    playing[index].glide = Glide(
                        from: current, to: MixingStream.usable(gain), first: written, frames: frames)
                    playing[index].stopsAfterGlide = thenStop
                case .stop(let id):
                    playing.removeAll { $0.id == id }
                    stopped.insert(id)
                case .end(let id, let moment):
                    guard let index = playing.firstIndex(where: { $0.id == id }) else { continue }
                    playing[index].end = moment
                }
            }
            return stopped
        }

        /// Mixes and writes one period; returns the sounds that ended in it.
        mutating func writeNextPeriod() throws(AudioDeviceError) -> Set<SoundID> {
            let heardFirst: UInt64
            let guessed = nextHeard == nil && !shape.primesWithSilence
            if let nextHeard {
                heardFirst = nextHeard
            } else if !shape.primesWithSilence {
                // The first period is heard when it is written: placed from now, as the output will place it.
                heardFirst = MonotonicTime.nanoseconds()
            } else {
                // A fresh stream starts with its first frame: with one period queued, the thread would have that
                // one period to come back before the device runs dry. Silence fills the rest of the buffer first,
                // so that the buffer's whole length stands between a late wake-up and an underrun.
                let priming = max(output.latency.bufferFrames - period, 0)
                let primed = try output.write([Float](repeating: 0, count: 2 * priming))
                written += priming
                heardFirst = primed + UInt64(priming) * 1_000_000_000 / UInt64(output.sampleRate)
            }
            var mix = [Float](repeating: 0, count: 2 * period)
            silentSinceLastSound = true
            var ended: Set<SoundID> = []
            var begun: [Int] = []
            for index in playing.indices {
                var mixed = false
                let waiting = playing[index].startLateness == nil
                if !mixIn(&playing[index], periodHeard: heardFirst, into: &mix, mixed: &mixed) {
                    ended.insert(playing[index].id)
                }
                if mixed { silentSinceLastSound = false }
                if waiting, playing[index].startLateness != nil { begun.append(index) }
            }
            if let curve = shape.limiter { for index in mix.indices { mix[index] = curve(mix[index]) } }
            limiter.limit(&mix)
            for index in mix.indices { mix[index] = mix[index].clippedSample }
            let heard = try output.write(mix)
            if guessed {
                // Placed from now, this period is heard when the output says: the sounds begun in it started
                // that much later (or sooner) than they were placed, which the catch-up must not take for a
                // writer that fell behind.
                for index in begun {
                    let lateness = Int64(playing[index].startLateness ?? 0) + Int64(heard) - Int64(heardFirst)
                    playing[index].startLateness = UInt64(max(lateness, 0))
                }
            }
            playing.removeAll { ended.contains($0.id) }
            written += period
            nextHeard = heard + UInt64(period) * 1_000_000_000 / UInt64(output.sampleRate)
            return ended
        }

        /// Adds the sound's frames for this period from its start on (`mixed` when it had any); false when it has
        /// ended. A start that has passed by the first period it could be heard in is made up for by skipping
        /// into the sound, so that its time t is still heard at start + t; so is a writer that fell behind its
        /// output mid-sound by more than `latestDrift` (a sound played whole: `latestWholeCatchUp`).
        private func mixIn(_ sound: inout Playing, periodHeard: UInt64, into mix: inout [Float], mixed: inout Bool)
            -> Bool
        {
            let whole = sound.source.playsWholeWhenLate
            var offset = 0
            if let start = sound.start, start > periodHeard {
                offset = Int((Double(start - periodHeard) * Double(output.sampleRate) / 1e9).rounded())
                if offset >= period { return true }
            } else if whole {
                // Late: played from its first frame all the same (`lateness` below).
            } else if let start = sound.start {
                let late = Double(periodHeard - start) / 1e9
                if late <= MixingStream.latestSkip {
                    let skipped = Int(late * Double(output.sampleRate))
                    if !Self.skip(&sound.source, frames: skipped) { return false }
                    sound.origin = start
                    sound.framesMixed = skipped
                }
            }
            // Where its next frame is heard against where the clock wanted it: a late start of a sound played
            // whole, and every stall of the writer after any start (the output hears a period later than it was
            // due), make it run late.
            let heard = periodHeard + UInt64(offset) * 1_000_000_000 / UInt64(output.sampleRate)
            // On time (it starts within this period), its first frame's place is its origin, to the frame; a late
            // start's origin is the start it was given (for a sound played whole, how late it is shows at once).
            let origin = sound.origin ?? (offset > 0 ? heard : whole ? sound.start ?? periodHeard : periodHeard)
            sound.origin = origin
            let due = origin + MixingStream.nanoseconds(frames: sound.framesMixed, rate: output.sampleRate)
            let late = heard > due ? heard - due : 0
            let startedLate = sound.startLateness ?? late
            sound.startLateness = startedLate
            let allowance = whole ? MixingStream.latestWholeCatchUp : MixingStream.latestDrift
            if late > startedLate, Double(late - startedLate) / 1e9 > allowance {
                // Fallen this much further behind mid-sound (the writer stood still, the device ran dry, the
                // process stopped): what the standstill took is skipped, back to how late the sound started, as
                // a sound in step with haptics must. A sound played whole through a shorter stall ends as much
                // later instead; kept whole through a long one, a looping pattern would stay that late for ever,
                // and its stop would come as late.
                let behind = Int(Double(late - startedLate) * Double(output.sampleRate) / 1e9)
                if !Self.skip(&sound.source, frames: behind) { return false }
                sound.framesMixed += behind
                if whole { sound.lateness = startedLate }
            } else if whole {
                sound.lateness = max(sound.lateness, late)
            }
            sound.start = nil
            // The frames of this period before the sound's end, when it has one: a sound whose end falls here
            // ends with this period.
            var count = period - offset
            if let givenEnd = sound.end {
                // An end that far ahead (up to `UInt64.max`) stays where it is rather than overflowing.
                let end = givenEnd > .max - sound.lateness ? .max : givenEnd + sound.lateness
                guard end > periodHeard else { return false }
                let framesToEnd = Int((Double(end - periodHeard) * Double(output.sampleRate) / 1e9).rounded())
                count = min(count, framesToEnd - offset)
                guard count > 0 else { return false }
            }
            var frames = [Float](repeating: 0, count: 2 * count)
            let more = sound.source.renderNext(into: &frames)
            mixed = true
            sound.framesMixed += count
            for frame in 0..<count {
                let gain = Float(sound.glide.gain(atFrame: written + offset + frame))
                mix[2 * (offset + frame)] += frames[2 * frame] * gain
                mix[2 * (offset + frame) + 1] += frames[2 * frame + 1] * gain
            }
            let glideDone = sound.glide.isOver(atFrame: written + period)
            return more && count == period - offset && !(sound.stopsAfterGlide && glideDone)
        }

        /// Renders and drops `frames` frames of `source`; false when it ended on the way.
        private static func skip(_ source: inout any SoundSource, frames: Int) -> Bool {
            var remaining = frames
            while remaining > 0 {
                var dropped = [Float](repeating: 0, count: 2 * min(remaining, 4096))
                if !source.renderNext(into: &dropped) { return false }
                remaining -= dropped.count / 2
            }
            return true
        }
    }
}
