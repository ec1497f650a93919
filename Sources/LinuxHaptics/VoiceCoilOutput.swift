// A DualSense's voice coils: patterns played as waveforms (sharpness as the carrier's frequency) instead of two
// motor levels. Each playing player's cues (PlayerState.cues: where it starts, its offset, rate and loop, until
// its next command) become waveform sources on a MixingStream (`VoiceCoilStream`). Its writer is the pad's:
// over Bluetooth, report 0x32 on its hidraw node, paced on CLOCK_MONOTONIC a fixed lead ahead of what the pad
// plays (a killed or stopped process leaves no more than the lead queued in it); over USB, channels 3 and 4 of
// its sound card, which the kernel stops when the process dies (or, while a sound server holds the card, of the
// server's output on it, which drops a client's stream when the client dies). The rumble motors are never
// written meanwhile: hid-playstation's rumble report turns the pad's audio haptics off.
package import AHAP
import AudioRendering
package import HapticRendering
import LinuxAudio
import LinuxInput
@_spi(Internals) import LinuxSystem
package import Logging
import Synchronization

/// What the voice-coil stream needs of one player (taken from the engine's state, like `EngineAudio.PlayerSound`):
/// its cues, even while it is muted (the player's `isMuted`, or the engine's haptics muted), so that a stream knows
/// a cue it is asked to play after a mute for one that began before it (`Lock.follow`).
struct WaveformPlayer: Sendable {
    var cues: [SoundCue]
    var pattern: HapticPattern
    /// Heard neither on the actuators nor anywhere: its cues play nothing while it is.
    var isMuted = false
}

/// The waveforms of a pad's voice coils: sources placed on the `CLOCK_MONOTONIC` timeline, mixed, limited and
/// written by the pad's writer on a thread of its own. One stream per pad in a process (`SharedVoiceCoils`): every
/// engine on the pad's voice coils is a member of it, its sources mixed with the others' (two engines, one per
/// handle's locality, play left and right; two writers of one pad's reports would interleave them).
package final class VoiceCoilStream: PatternStream {
    /// The pad's stream, which this engine is a member of.
    let shared: SharedVoiceCoils
    private let locality: HapticLocality
    /// The engine's gain, 0...1: its sources are scaled by it before they are mixed and limited.
    private let gain: Double
    private let sounds = Lock(CueSounds<MixingStream>())
    private let closed = Atomic<Bool>(false)

    /// The seconds of waveform the Bluetooth writer keeps queued in the pad ahead of what it plays: what a late
    /// wake-up of the stream thread may take before the pad runs dry. The writer waits for the queue to come down
    /// to it after each report, so the pad plays on for it and at most one report more after we stop.
    static let bluetoothLeadSeconds = 3 * DualSenseHapticsReport.seconds
    /// The sound card's ring buffer over USB, as the engine's sound has (`audioBufferSeconds`' default).
    static let soundCardBufferSeconds = 0.03

    private init(shared: SharedVoiceCoils, locality: HapticLocality, gain: Double) {
        self.shared = shared
        self.locality = locality
        self.gain = PureMath.unitClamped(gain)
    }

    /// A member of the pad's stream under `key` (its hidraw node, or its sound card): the stream this process
    /// already has there, or the one `make` starts.
    private static func join(
        _ key: String, locality: HapticLocality, gain: Double,
        make: () throws(OutputFailure) -> SharedVoiceCoils
    ) throws(OutputFailure) -> VoiceCoilStream {
        let shared = try SharedVoiceCoils.joined(key, make: make)
        return VoiceCoilStream(shared: shared, locality: locality, gain: gain)
    }

    /// The voice coils of a DualSense over Bluetooth, written to its hidraw node: one report per 32 frames, no
    /// silence before the first, nothing written while nothing plays. An engine of this process already playing
    /// on them is joined (then `hidraw`, another descriptor of the same node, is closed).
    static func bluetooth(_ hidraw: HidrawDevice, locality: HapticLocality, gain: Double = 1, logger: Logger)
        throws(OutputFailure) -> VoiceCoilStream
    {
        var made = false
        defer { if !made { hidraw.close() } }
        return try join(hidraw.node, locality: locality, gain: gain) { () throws(OutputFailure) in
            let writer = DualSenseHapticsWriter(device: hidraw, leadSeconds: bluetoothLeadSeconds, logger: logger)
            do throws(SystemCallError) {
                let shared = try SharedVoiceCoils(
                    key: hidraw.node, writer: writer,
                    shape: MixingStream.Shape(
                        minimumPeriodFrames: DualSenseHapticsReport.framesPerReport, limiter: limiter,
                        primesWithSilence: false, idlesWhenSilent: true),
                    logger: logger)
                made = true
                return shared
            } catch {
                writer.close()
                made = true
                throw OutputFailure(.other, "the voice-coil stream's thread cannot start: \(error)")
            }
        }
    }

    /// The voice coils of a DualSense over USB: channels 3 and 4 of its sound card's ALSA device (`device`, 4
    /// channels at 48 kHz), channels 1 and 2 silent; the card plays silence while nothing plays, as a sound
    /// card's stream does.
    package static func soundCard(
        _ device: String, locality: HapticLocality = .all, gain: Double = 1,
        bufferSeconds: Double = soundCardBufferSeconds, logger: Logger
    ) throws(OutputFailure) -> VoiceCoilStream {
        try join(device, locality: locality, gain: gain) { () throws(OutputFailure) in
            let output: ALSAOutput
            do throws(AudioDeviceError) {
                output = try openSoundCard(device, bufferSeconds: bufferSeconds, logger: logger)
            } catch {
                throw soundCardFailure(error)
            }
            return try soundCard(output: output, key: device, logger: logger)
        }
    }

    /// The voice coils of a DualSense over USB on sound card number `card`: its own device (`plughw:N,0`), or,
    /// while a sound server (PulseAudio, PipeWire) holds the card, the server's output on it through the server's
    /// ALSA plugin, four channels in alsa-lib's order, which the server plays on the card's channels of the same
    /// number when its output has those positions in that order (its 4-channel profile, `analog-surround-40`).
    package static func soundCard(
        number card: Int, locality: HapticLocality = .all, gain: Double = 1,
        bufferSeconds: Double = soundCardBufferSeconds, logger: Logger
    ) throws(OutputFailure) -> VoiceCoilStream {
        let own = "plughw:\(card),0"
        return try join(own, locality: locality, gain: gain) { () throws(OutputFailure) in
            let output: ALSAOutput
            do throws(AudioDeviceError) {
                output = try openSoundCard(own, bufferSeconds: bufferSeconds, logger: logger)
            } catch  where error.isBusy {
                output = try soundServerOutput(card: card, bufferSeconds: bufferSeconds, busy: error, logger: logger)
            } catch {
                throw soundCardFailure(error)
            }
            return try soundCard(output: output, key: own, logger: logger)
        }
    }

    /// Card `card`'s channels through the sound server that holds it (its `hw:` device answered `busy`).
    private static func soundServerOutput(
        card: Int, bufferSeconds: Double, busy: AudioDeviceError, logger: Logger
    ) throws(OutputFailure) -> ALSAOutput {
        let held = "the sound card is busy (\(busy.message)), and"
        let route: (server: String, sink: SoundServerSink)
        do throws(SoundServerRouteFailure) {
            route = try SoundServer.route(toCard: card, channels: 4)
        } catch {
            throw OutputFailure(.other, "the sound card of the voice coils cannot be reached: \(held) \(error)")
        }
        let (server, sink) = route
        var refusals: [String] = []
        for device in SoundServer.alsaDevices(for: sink) {
            do throws(AudioDeviceError) {
                let output = try openSoundCard(device, bufferSeconds: bufferSeconds, logger: logger)
                logger.info(
                    "the sound server holds the voice coils' card; playing through its output",
                    metadata: ["server": "\(server)", "card": "\(card)", "device": "\(device)"])
                return output
            } catch {
                refusals.append("\(error)")
            }
        }
        throw OutputFailure(
            .other,
            "the sound card of the voice coils cannot be reached: \(held) the sound server (\(server)) "
                + "plays it through \(sink.name), which no ALSA plugin of the server opens (install "
                + "libasound2-plugins for `pulse`, or pipewire-alsa for `pipewire`): "
                + refusals.joined(separator: "; "))
    }

    private static func openSoundCard(_ device: String, bufferSeconds: Double, logger: Logger)
        throws(AudioDeviceError) -> ALSAOutput
    {
        try ALSAOutput(
            device: device, sampleRate: AudioOutputs.defaultSampleRate, bufferSeconds: bufferSeconds,
            channels: 4, stereoChannel: 2, logger: logger)
    }

    private static func soundCardFailure(_ error: AudioDeviceError) -> OutputFailure {
        let kind: OutputFailure.Kind =
            error.isDeviceMissing ? .notFound : error.errno == .permissionDenied ? .permissionDenied : .other
        return OutputFailure(kind, "the sound card of the voice coils cannot be opened: \(error)")
    }

    private static func soundCard(output: ALSAOutput, key: String, logger: Logger) throws(OutputFailure)
        -> SharedVoiceCoils
    {
        let writer = SoundCardVoiceCoilWriter(output: output)
        do throws(SystemCallError) {
            return try SharedVoiceCoils(
                key: key, writer: writer, shape: MixingStream.Shape(limiter: limiter), logger: logger)
        } catch {
            writer.close()
            throw OutputFailure(.other, "the voice-coil stream's thread cannot start: \(error)")
        }
    }

    /// The soft limiter on the mix of every member's players (each source already scaled by its engine's gain).
    static let limiter: @Sendable (Float) -> Float = { Float(SoftLimiter.standard(Double($0))) }

    private var writer: any VoiceCoilWriter { shared.writer }
    private var mixing: MixingStream { shared.mixing }

    /// The node or ALSA device the waveform goes to.
    package var deviceName: String { writer.deviceName }
    /// Frames per second the voice coils are fed at.
    package var sampleRate: Int { writer.sampleRate }
    /// Why the stream ended, once it did.
    var failure: OutputFailure? { shared.failure }
    /// Periods or reports written, and underruns, so far.
    package var counts: (reports: Int, underruns: Int) { writer.counts }
    /// What the voice coils play now.
    var activity: ActuatorActivity { writer.activity }
    func activity(at time: Double) -> ActuatorActivity {
        writer.activity(atNanoseconds: MonotonicClock.nanoseconds(time))
    }
    /// What the pad (Bluetooth) or the card's buffer, and a sound server's, hold ahead of now.
    var startLead: Double { Double(mixing.leadNanoseconds) / 1e9 }

    /// Ends this engine's part: its sounds stop at once. The stream ends, and its writer closes, with its last
    /// member.
    package func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        // This engine's sounds end now; the last member's leaving ends the stream and closes its writer.
        sounds.withLock { $0.stopAll(on: mixing) }
        shared.leave()
    }

    /// Plays `pattern` once from its start, its first frame heard at `startNanoseconds` (`CLOCK_MONOTONIC`), on
    /// its own: what the engine does for a player started then, without an engine (the kernel tests' loopback).
    /// Like the engine's start from the top, it is played whole when it reaches the stream late.
    package func play(_ pattern: HapticPattern, atNanoseconds startNanoseconds: UInt64) {
        let renderer = WaveformRenderer(pattern: pattern, sampleRate: Double(sampleRate), locality: locality)
        let source = WaveformSource(
            renderer: renderer, offset: 0, loopLength: nil, playsWholeWhenLate: true, gain: gain)
        sounds.startAlone(source, atNanoseconds: startNanoseconds, on: mixing) { !closed.load(ordering: .relaxed) }
    }

    // MARK: The players' waveforms

    /// Makes the stream play what `players` ask for from `now` (engine time on `CLOCK_MONOTONIC`): new cues
    /// placed at their anchors, cues no longer asked for ended, changed ends passed on.
    func sync(_ players: [PlayerID: WaveformPlayer], now: Double) {
        guard !closed.load(ordering: .relaxed) else { return }
        // Sources are made outside the lock (a cursor placed inside a sharpness curve steps to its offset frame by
        // frame).
        sounds.follow(players, now: now, on: mixing, isOpen: { !closed.load(ordering: .relaxed) }) {
            player, cue, start in
            let renderer = WaveformRenderer(
                pattern: player.pattern, controls: cue.controls, sampleRate: Double(sampleRate),
                playbackRate: cue.anchor.rate, locality: locality)
            return WaveformSource(renderer: renderer, cue: cue, from: start, gain: gain)
        }
    }
}

/// The voice-coil stream of one pad in this process: one mixing stream and one writer, whichever engines play on
/// the pad (`VoiceCoilStream` is an engine's membership), by hidraw node or sound card while it has members.
final class SharedVoiceCoils: Sendable {
    let key: String
    let mixing: MixingStream
    let writer: any VoiceCoilWriter
    private let firstFailure = StreamFailure()

    /// The streams by key, while they have members.
    private static let streams = PadShares<SharedVoiceCoils>()

    /// Starts the stream that `writer` writes.
    init(key: String, writer: any VoiceCoilWriter, shape: MixingStream.Shape, logger: Logger)
        throws(SystemCallError)
    {
        self.key = key
        self.writer = writer
        let failure = firstFailure
        var quieter = logger
        // The stream's end is the output's failure, which the engine hears through its next primitive and
        // reports itself (an unplug is not a warning).
        quieter.logLevel = max(logger.logLevel, .error)
        mixing = try MixingStream(
            output: writer, shape: shape, logger: quieter,
            onFailure: { error in
                failure.record(OutputFailure(error.isDeviceMissing ? .deviceGone : .other, error.description))
            })
    }

    /// Why the stream ended, once it did.
    var failure: OutputFailure? { firstFailure.first }

    /// The stream under `key` with one member more: this process's, unless it has ended (its pad went away);
    /// otherwise the one `make` starts (with its maker as its member), kept under `key`.
    static func joined(_ key: String, make: () throws(OutputFailure) -> SharedVoiceCoils) throws(OutputFailure)
        -> SharedVoiceCoils
    {
        try streams.joined(key, isUsable: { $0.failure == nil }, make: make)
    }

    /// One member fewer: the last ends the stream (its final period puts the actuators at rest) and closes the
    /// writer.
    func leave() {
        Self.streams.leave(self) { $0.mixing.close(closingOutput: true) }
    }
}

/// The first failure of a stream, told from its thread.
private final class StreamFailure: Sendable {
    private let value = Lock<OutputFailure?>(nil)
    var first: OutputFailure? { value.withLock { $0 } }
    func record(_ failure: OutputFailure) { value.withLock { $0 = $0 ?? failure } }
}

/// One player's waveform as the stream mixes it: a renderer's frames from a pattern offset on, starting again
/// from the pattern's beginning every `loopLength` seconds of pattern time for a looping player.
struct WaveformSource: SoundSource {
    private let renderer: WaveformRenderer
    private var cursor: WaveformCursor
    /// Where a loop goes back to 0; nil when the player does not loop.
    private let loop: LoopFrames?
    /// The pass of the loop the cursor is in, and how many frames it lasts.
    private var pass = 0
    private var passLength = 0
    /// A pattern started from its beginning is played whole when it reaches the stream late: the engine starts
    /// it after what the stream has queued (`startLead`), but on a loaded machine the source can be handed over
    /// after that moment, or after the thread began that period's mix, and a short tap would lose its first
    /// samples. Its time then runs late by what it missed, to its end (the stream ends it as much later).
    /// Anything picked up part-way (after a change of the player's controls, a seek) keeps the engine's time.
    let playsWholeWhenLate: Bool
    private let gain: Float

    /// The source of a player's `cue` from engine time `start` on. A cue anchored at the pattern's beginning is
    /// the player's start (a change while it plays anchors its cue where the player is then): it is played whole,
    /// even when placed a little late. Any other cue is picked up where the player is at `start`.
    init(renderer: WaveformRenderer, cue: SoundCue, from start: Double, gain: Double = 1) {
        let fromTheTop = cue.anchor.offset == 0
        self.init(
            renderer: renderer, offset: fromTheTop ? 0 : cue.anchor.offset(at: start),
            loopLength: cue.anchor.loopLength, playsWholeWhenLate: fromTheTop, gain: gain)
    }

    /// `gain`: its engine's, 0...1, which scales every sample before the mix is limited.
    init(
        renderer: WaveformRenderer, offset: Double, loopLength: Double?, playsWholeWhenLate: Bool = false,
        gain: Double = 1
    ) {
        self.renderer = renderer
        self.playsWholeWhenLate = playsWholeWhenLate
        self.gain = Float(PureMath.unitClamped(gain))
        loop = loopLength.map { LoopFrames(length: $0, rate: renderer.framesPerPatternSecond) }
        passLength = loop?.length(ofPass: 0) ?? 0
        cursor = renderer.cursor(at: FrameCount.of(offset, at: renderer.framesPerPatternSecond))
    }

    mutating func renderNext(into buffer: inout [Float]) -> Bool {
        let frames = buffer.count / 2
        var done = 0
        while done < frames {
            if let loop, cursor.position >= passLength {
                pass += 1
                passLength = loop.length(ofPass: pass)
                cursor = renderer.cursor(at: 0)
            }
            let count = min(frames - done, loop == nil ? frames - done : passLength - cursor.position)
            let block = cursor.render(count: count)
            for index in 0..<count {
                buffer[2 * (done + index)] = Float(block.left[index]) * gain
                buffer[2 * (done + index) + 1] = Float(block.right[index]) * gain
            }
            done += count
        }
        return loop != nil || cursor.position < renderer.endFrame
    }
}

/// What writes a pad's voice coils: an audio output at their rate that says what it sent.
protocol VoiceCoilWriter: AudioOutput {
    /// Reports (or periods) written, and underruns, so far.
    var counts: (reports: Int, underruns: Int) { get }
    /// What the voice coils play now.
    var activity: ActuatorActivity { get }
    /// What they played at `nanoseconds` (`CLOCK_MONOTONIC`): a moment of the last quarter second, or now.
    func activity(atNanoseconds nanoseconds: UInt64) -> ActuatorActivity
}

/// The samples sent to the voice coils with when each is heard, for `ActuatorActivity`: what plays now is what was
/// written a queue's length ago (the pad's queue over Bluetooth, the card's buffer over USB). Each actuator's peak
/// over the 32 ms heard up to now (the block heard now when it is longer: a report, or a period) and the louder
/// one's frequency over the 64 ms heard up to now; after what was written has all been heard, silence. A tap's
/// burst on the coils lasts about a block, so a peak over the block alone read 0 twenty milliseconds into a tap
/// whenever the pad played it on time (`haptics feedback --actuators hd` printed each tap at 0 on an idle machine,
/// until 7 December).
struct VoiceCoilMeter: Sendable {
    let sampleRate: Int
    private var left: [Float] = []
    private var right: [Float] = []
    /// When the frame after the last one kept is heard (`CLOCK_MONOTONIC` nanoseconds); nil before any write.
    private var endHeard: UInt64?
    /// The last block written's length: a peak is taken over it when it is longer than `peakWindow`.
    private var block = 0

    init(sampleRate: Int) { self.sampleRate = sampleRate }

    /// The frames the frequency is measured over: 64 ms.
    var window: Int { sampleRate * 64 / 1000 }
    /// The frames a peak is taken over at least: 32 ms.
    var peakWindow: Int { sampleRate * 32 / 1000 }
    /// The frames kept: the window and half a second of queue ahead of what is heard, more than any queue holds.
    var capacity: Int { window + sampleRate / 2 }

    private func frames(from start: UInt64, to end: UInt64) -> Int {
        end > start ? Int((Double(end - start) * Double(sampleRate) / 1e9).rounded()) : 0
    }

    /// How far a block's `heard` may be from the end of the one before and still follow it: the jitter of where
    /// a device says its next frame is heard (`MixingStream.latestDrift`).
    static let jitterNanoseconds = UInt64(MixingStream.latestDrift * 1e9)

    /// A block written, its first frame heard at `heard`. A block heard within the jitter of the last one's end
    /// follows it (a sound card's estimates, taken before each write, come a few milliseconds early or late; taken
    /// as they came, each early one moved every frame kept before it earlier, until a past moment read a tap at
    /// the wrong place). A gap since the last block past that (the stream idled, or ran dry) is silence; a block
    /// heard earlier than that moves what is kept back to it.
    mutating func record(
        left newLeft: some Collection<Float>, right newRight: some Collection<Float>, heard: UInt64
    ) {
        var start = heard
        if let endHeard {
            if heard > endHeard + Self.jitterNanoseconds {
                let gap = min(frames(from: endHeard, to: heard), capacity)
                left += repeatElement(0, count: gap)
                right += repeatElement(0, count: gap)
            } else if heard + Self.jitterNanoseconds >= endHeard {
                start = endHeard
            }
        }
        left += newLeft
        right += newRight
        block = newLeft.count
        endHeard = start + UInt64(Double(newLeft.count) * 1e9 / Double(sampleRate))
        // Trimmed in steps of a capacity, so a write copies nothing on average.
        if left.count > 2 * capacity {
            left.removeFirst(left.count - capacity)
            right.removeFirst(right.count - capacity)
        }
    }

    /// What is heard at `now`.
    func activity(at now: UInt64) -> ActuatorActivity {
        guard let endHeard else { return .atRest }
        // The frame heard now, as an index into what is kept (past its end once everything was heard).
        let position =
            now >= endHeard
            ? left.count + frames(from: endHeard, to: now) : left.count - frames(from: now, to: endHeard)
        func heard(_ samples: [Float], frames: Int) -> ArraySlice<Float> {
            let end = min(max(position, 0), samples.count)
            return samples[min(max(position - frames, 0), end)..<end]
        }
        func peak(_ samples: [Float]) -> Double {
            Double(heard(samples, frames: Swift.max(block, peakWindow)).map(abs).max() ?? 0)
        }
        let louder = Array(heard(peak(left) >= peak(right) ? left : right, frames: window))
        // Rising zero crossings: the periods between the first and the last, over the time between them.
        let crossings = louder.indices.dropFirst().filter { louder[$0 - 1] < 0 && louder[$0] >= 0 }
        var frequency: Double?
        if let first = crossings.first, let last = crossings.last, last > first {
            frequency = Double(crossings.count - 1) * Double(sampleRate) / Double(last - first)
        }
        return ActuatorActivity(left: peak(left), right: peak(right), frequency: frequency)
    }
}

/// The voice coils over USB: a sound card's ALSA output, its channels 3 and 4 carrying them.
final class SoundCardVoiceCoilWriter: VoiceCoilWriter {
    private let output: ALSAOutput
    private let meter: Lock<VoiceCoilMeter>
    private let periods = Atomic<Int>(0)

    init(output: ALSAOutput) {
        self.output = output
        meter = Lock(VoiceCoilMeter(sampleRate: output.sampleRate))
    }

    var deviceName: String { output.deviceName }
    var sampleRate: Int { output.sampleRate }
    var latency: AudioLatency { output.latency }
    var counts: (reports: Int, underruns: Int) { (periods.load(ordering: .relaxed), output.xrunCount) }
    var activity: ActuatorActivity { activity(atNanoseconds: MonotonicTime.nanoseconds()) }
    func activity(atNanoseconds nanoseconds: UInt64) -> ActuatorActivity {
        meter.withLock { $0.activity(at: nanoseconds) }
    }

    @discardableResult
    func write(_ samples: [Float]) throws(AudioDeviceError) -> UInt64 {
        let heard = try output.write(samples)
        periods.add(1, ordering: .relaxed)
        meter.withLock {
            $0.record(
                left: stride(from: 0, to: samples.count, by: 2).map { samples[$0] },
                right: stride(from: 1, to: samples.count, by: 2).map { samples[$0] }, heard: heard)
        }
        return heard
    }

    func delay() throws(AudioDeviceError) -> Double { try output.delay() }
    func drain() throws(AudioDeviceError) { try output.drain() }
    func close() { output.close() }
}

/// The DualSense's haptics stream as an audio output at 3 kHz: every 32 frames become one report 0x32, written to
/// the pad's hidraw node at once, then the write waits while more than the lead is queued in the pad (the pad
/// plays what it receives in order, 32 frames per 10.67 ms). The time of that queue is kept as a sound card's
/// is, by a `NullAudioOutput` of the lead's length, so the stream places sounds on it to the frame.
final class DualSenseHapticsWriter: VoiceCoilWriter {
    var deviceName: String { device.node }
    let sampleRate = DualSenseHapticsReport.sampleRate
    let latency: AudioLatency
    private let device: HidrawDevice
    private let queue: NullAudioOutput
    private let clock: @Sendable () -> UInt64
    private let logger: Logger
    private struct State {
        var counter: UInt8 = 0
        /// The last report carried sound: a queue found empty at the next one is an underrun.
        var lastCarriedSound = false
        var reports = 0
        var underruns = 0
        var meter = VoiceCoilMeter(sampleRate: DualSenseHapticsReport.sampleRate)
    }
    private let state: Lock<State>

    /// `clock` is the queue's time, `CLOCK_MONOTONIC` unless a test holds it still. The first report carries on
    /// from the counter the last stream on the node left (`PadCounters`).
    init(
        device: HidrawDevice, leadSeconds: Double, logger: Logger,
        clock: @escaping @Sendable () -> UInt64 = { MonotonicTime.nanoseconds() }
    ) {
        state = Lock(State(counter: PadCounters.next(for: device.node)))
        self.device = device
        self.logger = logger
        self.clock = clock
        queue = NullAudioOutput(
            sampleRate: DualSenseHapticsReport.sampleRate, bufferSeconds: leadSeconds, clock: clock)
        latency = AudioLatency(
            bufferFrames: queue.latency.bufferFrames, periodFrames: DualSenseHapticsReport.framesPerReport,
            sampleRate: DualSenseHapticsReport.sampleRate)
    }

    var counts: (reports: Int, underruns: Int) { state.withLock { ($0.reports, $0.underruns) } }
    var activity: ActuatorActivity { activity(atNanoseconds: clock()) }
    func activity(atNanoseconds nanoseconds: UInt64) -> ActuatorActivity {
        state.withLock { $0.meter.activity(at: nanoseconds) }
    }

    @discardableResult
    func write(_ samples: [Float]) throws(AudioDeviceError) -> UInt64 {
        let perReport = 2 * DualSenseHapticsReport.framesPerReport
        var heard: UInt64?
        var start = 0
        while start < samples.count {
            let chunk = Array(samples[start..<min(start + perReport, samples.count)])
            start += perReport
            let pcm = chunk.map(DualSenseHapticsReport.sample)
            let dry = try queue.delay() == 0
            let report = state.withLock { state in
                defer { state.counter &+= 1 }
                if dry, state.lastCarriedSound { state.underruns += 1 }
                state.lastCarriedSound = pcm.contains { $0 != 0 }
                state.reports += 1
                return DualSenseHapticsReport(counter: state.counter, samples: pcm)
            }
            do throws(EventDeviceError) {
                try device.write(report.bytes)
            } catch {
                throw AudioDeviceError(
                    device: device.node, call: "write", errno: error.underlying?.errno ?? .ioError,
                    message: error.description)
            }
            let queued = try queue.write(chunk + [Float](repeating: 0, count: perReport - chunk.count))
            state.withLock { state in
                state.meter.record(
                    left: report.left.map { Float($0) / 127 }, right: report.right.map { Float($0) / 127 },
                    heard: queued)
            }
            heard = heard ?? queued
        }
        return heard ?? clock()
    }

    func delay() throws(AudioDeviceError) -> Double { try queue.delay() }
    func drain() throws(AudioDeviceError) { try queue.drain() }

    /// Ends the stream with a silent report when the last one carried sound (the stream closed mid-sound), so
    /// that a pad which holds or repeats what it last received falls silent too; leaves the next counter to the
    /// next stream on the node (`PadCounters`); then closes the node.
    func close() {
        let (silence, next) = state.withLock { state -> (DualSenseHapticsReport?, UInt8) in
            guard state.lastCarriedSound else { return (nil, state.counter) }
            state.lastCarriedSound = false
            defer { state.counter &+= 1 }
            return (DualSenseHapticsReport(counter: state.counter, samples: []), state.counter &+ 1)
        }
        if let silence { try? device.write(silence.bytes) }
        PadCounters.record(next, for: device.node)
        queue.close()
        device.close()
    }
}
