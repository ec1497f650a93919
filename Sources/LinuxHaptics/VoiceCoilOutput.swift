// The DualSense's voice coils over Bluetooth: patterns played as waveforms (sharpness as the carrier's frequency)
// instead of two motor levels. Each playing player's cues (PlayerState.cues: where it starts, its offset, rate
// and loop, until its next command) become waveform sources on a MixingStream, whose output packs 32 frames at a
// time into report 0x32 and writes it to the pad's hidraw node, paced on CLOCK_MONOTONIC a fixed lead ahead of
// what the pad plays. The rumble motors are never written meanwhile: hid-playstation's rumble report turns the
// pad's audio haptics off. A killed or stopped process leaves no more than the lead queued in the pad.
import AHAP
import AudioRendering
import HapticRendering
import LinuxAudio
import LinuxInput
import LinuxSystem
import Logging
import Synchronization

/// What the voice-coil stream needs of one player (taken from the engine's state, like `EngineAudio.PlayerSound`).
struct WaveformPlayer: Sendable {
    var cues: [SoundCue]
    var pattern: HapticPattern
    var controls: RuntimeControls
}

/// A motor output for a pad whose voice coils play the engine's patterns: the motor primitive writes nothing
/// (the waveform carries the pattern), and `sync` keeps the stream in line with the players.
final class VoiceCoilOutput: MotorOutput {
    let capabilities: OutputCapabilities
    /// Held open for the pad's identity and so that its slot in the kernel stays ours; never written.
    private let device: EventDevice
    private let stream: MixingStream
    private let writer: DualSenseHapticsWriter
    private let locality: HapticLocality
    private let logger: Logger
    private let sounds = Lock<[PlayerID: [SoundAnchor: PlayingWaveform]]>([:])
    /// Why the stream ended, reported by the next primitive the engine sends.
    private let failure = StreamFailure()
    private let closed = Atomic<Bool>(false)

    private struct PlayingWaveform {
        var id: MixingStream.SoundID
        var end: Double?
    }

    /// The seconds of waveform kept queued in the pad ahead of what it plays: what a late wake-up of the stream
    /// thread may take before the pad runs dry, and the most it plays on after we stop writing.
    static let leadSeconds = 3 * DualSenseHapticsReport.seconds

    init(
        device: EventDevice, hidraw: HidrawDevice, driver: String?, locality: HapticLocality, logger: Logger
    ) throws(OutputFailure) {
        self.device = device
        self.locality = locality
        self.logger = logger
        var capabilities = OutputCapabilities(
            name: device.identity.name, deviceID: device.id, node: device.node,
            effectSlots: device.forceFeedback.maxEffects, isVirtual: false, driver: driver,
            renderProfile: .forDevice(driver: driver, identity: device.identity))
        capabilities.voiceCoilNode = hidraw.node
        self.capabilities = capabilities
        writer = DualSenseHapticsWriter(device: hidraw, leadSeconds: Self.leadSeconds, logger: logger)
        let failure = self.failure
        do throws(SystemCallError) {
            stream = try MixingStream(
                output: writer,
                shape: MixingStream.Shape(
                    minimumPeriodFrames: DualSenseHapticsReport.framesPerReport,
                    limiter: { Float(SoftLimiter.standard(Double($0))) }, primesWithSilence: false,
                    idlesWhenSilent: true),
                logger: Self.streamLogger(logger),
                onFailure: { error in
                    failure.record(OutputFailure(error.isDeviceMissing ? .deviceGone : .other, error.description))
                })
        } catch {
            writer.close()
            throw OutputFailure(.other, "the voice-coil stream's thread cannot start: \(error)")
        }
    }

    /// The stream's own logger: its end is the output's failure, which the engine hears through the next
    /// primitive and reports itself (an unplug is not a warning).
    private static func streamLogger(_ logger: Logger) -> Logger {
        var quieter = logger
        quieter.logLevel = max(logger.logLevel, .error)
        return quieter
    }

    // MARK: The motor primitive: nothing reaches the motors

    /// The stream's failure, if it ended: reported to the engine through the primitive it calls next.
    private func check() throws(OutputFailure) {
        if closed.load(ordering: .relaxed) { throw OutputFailure(.closed, "the output is closed") }
        if let failure = failure.first { throw failure }
    }

    func sendNeutral() throws(OutputFailure) { try check() }
    func apply(_ mix: MotorMagnitudes) throws(OutputFailure) { try check() }
    func keepAlive() throws(OutputFailure) { try check() }

    /// Pulses are rumble effects: a pattern's transients play in its waveform.
    func prepare(_ pulse: PreparedPulse) throws(OutputFailure) -> Int {
        throw OutputFailure(.unsupported, "voice coils play patterns as waveforms, not prepared pulses")
    }

    func trigger(prepared id: Int) throws(OutputFailure) {
        throw OutputFailure(.unsupported, "voice coils have no prepared pulses")
    }

    func pulseTrigger(prepared id: Int) -> (any PulseTrigger)? { nil }
    func stop(prepared id: Int) throws(OutputFailure) {}
    func release(prepared id: Int) {}
    func currentLevels() -> MotorMagnitudes? { nil }

    /// Ends the stream (its last report queued is the pad's last), then closes the nodes.
    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        stream.close(closingOutput: true)
        sounds.withLock { $0 = [:] }
        device.close()
    }

    /// Reports written and underruns so far (a report sent after the pad's queue ran dry mid-sound).
    var streamCounts: (reports: Int, underruns: Int) { writer.counts }

    /// What the voice coils were last sent.
    var activity: VoiceCoilActivity { writer.activity }

    // MARK: The players' waveforms

    /// Makes the stream play what `players` ask for from `now` (engine time on `CLOCK_MONOTONIC`): new cues
    /// placed at their anchors, cues no longer asked for ended, changed ends passed on.
    func sync(_ players: [PlayerID: WaveformPlayer], now: Double) {
        guard !closed.load(ordering: .relaxed) else { return }
        let missing = sounds.withLock { sounds -> [(PlayerID, SoundCue, WaveformPlayer)] in
            for (player, playing) in sounds {
                let cues = players[player]?.cues ?? []
                for (anchor, sound) in playing where !cues.contains(where: { $0.anchor == anchor }) {
                    stream.stop(sound.id)
                    sounds[player]?[anchor] = nil
                }
                if sounds[player]?.isEmpty == true { sounds[player] = nil }
            }
            var missing: [(PlayerID, SoundCue, WaveformPlayer)] = []
            for (player, wanted) in players {
                for cue in wanted.cues {
                    guard var playing = sounds[player]?[cue.anchor] else {
                        missing.append((player, cue, wanted))
                        continue
                    }
                    guard playing.end != cue.end, let end = cue.end else { continue }
                    playing.end = end
                    stream.stop(playing.id, atNanoseconds: MonotonicClock.nanoseconds(end))
                    sounds[player]?[cue.anchor] = playing
                }
            }
            return missing
        }
        guard !missing.isEmpty else { return }
        // Sources are made outside the lock (a cursor placed into a long pattern steps to its offset).
        let sources = missing.map { player, cue, wanted in
            (player, cue, source(for: cue, of: wanted, now: now))
        }
        sounds.withLock { sounds in
            guard !closed.load(ordering: .relaxed) else { return }
            for (player, cue, source) in sources where sounds[player]?[cue.anchor] == nil {
                let id = stream.play(source.source, at: source.startNanoseconds)
                if let end = cue.end { stream.stop(id, atNanoseconds: MonotonicClock.nanoseconds(end)) }
                sounds[player, default: [:]][cue.anchor] = PlayingWaveform(id: id, end: cue.end)
            }
        }
    }

    /// A cue's waveform from its anchor when that is still ahead, else from where the player is now (the stream
    /// skips what has passed, so the waveform stays on the engine's clock).
    private func source(for cue: SoundCue, of player: WaveformPlayer, now: Double)
        -> (source: WaveformSource, startNanoseconds: UInt64)
    {
        let start = max(cue.anchor.time, now)
        let renderer = WaveformRenderer(
            pattern: player.pattern, controls: player.controls, sampleRate: Double(DualSenseHapticsReport.sampleRate),
            playbackRate: cue.anchor.rate, locality: locality)
        let source = WaveformSource(
            renderer: renderer, offset: cue.anchor.offset(at: start), loopLength: cue.anchor.loopLength)
        return (source, MonotonicClock.nanoseconds(start))
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
    /// The frame a loop goes back to 0 at; nil when the player does not loop.
    private let loopFrame: Int?

    init(renderer: WaveformRenderer, offset: Double, loopLength: Double?) {
        self.renderer = renderer
        let frame = { (time: Double) in Int((time * renderer.framesPerPatternSecond).rounded()) }
        loopFrame = loopLength.map { max(1, frame($0)) }
        cursor = renderer.cursor(at: max(0, frame(offset)))
    }

    mutating func renderNext(into buffer: inout [Float]) -> Bool {
        let frames = buffer.count / 2
        var done = 0
        while done < frames {
            if let loopFrame, cursor.position >= loopFrame { cursor = renderer.cursor(at: 0) }
            let count = min(frames - done, loopFrame.map { $0 - cursor.position } ?? frames - done)
            let block = cursor.render(count: count)
            for index in 0..<count {
                buffer[2 * (done + index)] = Float(block.left[index])
                buffer[2 * (done + index) + 1] = Float(block.right[index])
            }
            done += count
        }
        return loopFrame != nil || cursor.position < renderer.endFrame
    }
}

/// The DualSense's haptics stream as an audio output at 3 kHz: every 32 frames become one report 0x32, written to
/// the pad's hidraw node at once, then the write waits while more than the lead is queued in the pad (the pad
/// plays what it receives in order, 32 frames per 10.67 ms). The time of that queue is kept as a sound card's
/// is, by a `NullAudioOutput` of the lead's length, so the stream places sounds on it to the frame.
final class DualSenseHapticsWriter: AudioOutput {
    var deviceName: String { device.node }
    let sampleRate = DualSenseHapticsReport.sampleRate
    let latency: AudioLatency
    private let device: HidrawDevice
    private let queue: NullAudioOutput
    private let logger: Logger
    private struct State {
        var counter: UInt8 = 0
        /// The last report carried sound: a queue found empty at the next one is an underrun.
        var lastCarriedSound = false
        var reports = 0
        var underruns = 0
        /// The last reports' samples, left and right, for `activity`.
        var recentLeft: [Int8] = []
        var recentRight: [Int8] = []
    }
    private let state = Lock(State())
    /// The frames `activity` measures the frequency over: six reports, 64 ms.
    static let activityFrames = 6 * DualSenseHapticsReport.framesPerReport

    init(device: HidrawDevice, leadSeconds: Double, logger: Logger) {
        self.device = device
        self.logger = logger
        queue = NullAudioOutput(sampleRate: DualSenseHapticsReport.sampleRate, bufferSeconds: leadSeconds)
        latency = AudioLatency(
            bufferFrames: queue.latency.bufferFrames, periodFrames: DualSenseHapticsReport.framesPerReport,
            sampleRate: DualSenseHapticsReport.sampleRate)
    }

    var counts: (reports: Int, underruns: Int) { state.withLock { ($0.reports, $0.underruns) } }

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
                let report = DualSenseHapticsReport(counter: state.counter, samples: pcm)
                state.recentLeft = Array((state.recentLeft + report.left).suffix(Self.activityFrames))
                state.recentRight = Array((state.recentRight + report.right).suffix(Self.activityFrames))
                return report
            }
            do throws(EventDeviceError) {
                try device.write(report.bytes)
            } catch {
                throw AudioDeviceError(
                    device: device.node, call: "write", errno: error.underlying?.errno ?? .ioError,
                    message: error.description)
            }
            let queued = try queue.write(chunk + [Float](repeating: 0, count: perReport - chunk.count))
            heard = heard ?? queued
        }
        return heard ?? MonotonicTime.nanoseconds()
    }

    /// Each actuator's peak in the last report and the louder one's frequency over the last six.
    var activity: VoiceCoilActivity {
        let (left, right) = state.withLock { ($0.recentLeft, $0.recentRight) }
        let last = DualSenseHapticsReport.framesPerReport
        func peak(_ samples: [Int8]) -> Double {
            Double(samples.suffix(last).map { abs(Int($0)) }.max() ?? 0) / 127
        }
        let louder = peak(left) >= peak(right) ? left : right
        let crossings = zip(louder, louder.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        let seconds = Double(louder.count) / Double(DualSenseHapticsReport.sampleRate)
        return VoiceCoilActivity(
            left: peak(left), right: peak(right), frequency: crossings > 0 ? Double(crossings) / seconds : nil)
    }

    func delay() throws(AudioDeviceError) -> Double { try queue.delay() }
    func drain() throws(AudioDeviceError) { try queue.drain() }

    /// Ends the stream with a silent report when the last one carried sound (the stream closed mid-sound), so
    /// that a pad which holds or repeats what it last received falls silent too; then closes the node.
    func close() {
        let silence = state.withLock { state -> DualSenseHapticsReport? in
            guard state.lastCarriedSound else { return nil }
            state.lastCarriedSound = false
            defer { state.counter &+= 1 }
            return DualSenseHapticsReport(counter: state.counter, samples: [])
        }
        if let silence { try? device.write(silence.bytes) }
        queue.close()
        device.close()
    }
}
