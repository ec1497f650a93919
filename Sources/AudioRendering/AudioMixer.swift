public import AHAP

/// Renders an `AudioSchedule` into interleaved stereo `Float` frames at an output rate, block after block from
/// the pattern's start: what an audio output writes to its device.
///
/// Per frame: each sounding voice's source (the tone, or its clip read at a fractional position: linear
/// interpolation between frames for pitch), its brightness low-pass, its envelope, then volume and pan; voices
/// sum and the sum is kept within -1 ... 1 by a `PeakLimiter` (not clipped). The controls are read every
/// `controlFrames` frames: volume and pan glide linearly from one reading to the next (no zipper noise), pitch
/// and brightness hold.
///
/// At most `maximumVoices` voices sound at once: a voice that starts when that many sound takes the place of the
/// one that started first, which fades out over one control block. A block costs what its sounding voices cost,
/// whatever the pattern holds besides them.
public struct AudioMixer: Sendable {
    public let schedule: AudioSchedule
    public let sampleRate: Double
    /// Frames rendered so far: the next frame rendered is at pattern time `framesRendered / sampleRate`.
    public private(set) var framesRendered = 0
    private let clips: [AudioWaveform: AudioClip]
    private var states: [VoiceState]
    /// The voices by start (then by place in the pattern), and how many of them have been reached.
    private let byStart: [Int]
    private var reached = 0
    /// The voices reached that have not ended, in pattern order (the order they are summed in).
    private var sounding: [Int] = []
    /// When the last voice ends (`schedule.end`, kept).
    private let end: Double
    /// Keeps the sum of the voices within full scale.
    private var limiter: PeakLimiter

    /// How often the controls are read, in frames (1.3 ms at 48 kHz).
    public static let controlFrames = 64

    /// The most voices sounding at once: far more than a pattern's sound needs (the corpus's patterns sound one
    /// at a time), and a bound on what a pattern of thousands of overlapping audio events costs the thread that
    /// must render it within each period.
    public static let maximumVoices = 32

    /// A mixer at `sampleRate` for `schedule`, reading `AudioCustom` voices from `clips` by what they play (a
    /// voice whose clip is missing stays silent). Its first frame is at pattern time `offset` (a player
    /// resumed or sought into its pattern): every voice sounding then starts part-way, as if it had played from
    /// its start. A `sampleRate` that is not the output's plays the pattern faster or slower, higher or lower
    /// (varispeed): pattern time advances `1 / sampleRate` per frame written.
    public init(
        schedule: AudioSchedule, clips: [AudioWaveform: AudioClip], sampleRate: Double, startingAt offset: Double = 0
    ) {
        self.schedule = schedule
        self.clips = clips
        self.sampleRate = sampleRate
        framesRendered = FrameCount.of(offset, at: sampleRate)
        states = Array(repeating: VoiceState(), count: schedule.voices.count)
        byStart = schedule.voices.indices.sorted { (schedule.voices[$0].start, $0) < (schedule.voices[$1].start, $1) }
        end = schedule.end
        limiter = PeakLimiter(sampleRate: sampleRate)
    }

    /// Whether every voice has ended; at once for a rate that is not a positive number, at which nothing can play
    /// (it never ended, until 6 December).
    public var isFinished: Bool {
        !(sampleRate > 0 && sampleRate.isFinite) || Double(framesRendered) / sampleRate >= end
    }

    /// Overwrites `buffer` (2 samples per frame: left, right) with the next `buffer.count / 2` frames.
    public mutating func render(into buffer: inout [Float]) {
        let frames = buffer.count / 2
        for index in buffer.indices { buffer[index] = 0 }
        var done = 0
        while done < frames {
            let count = Swift.min(Self.controlFrames, frames - done)
            admitVoices(from: framesRendered + done, count: count)
            for index in sounding {
                mix(voice: index, from: framesRendered + done, count: count, into: &buffer, at: done)
            }
            sounding.removeAll { states[$0].finished }
            done += count
        }
        framesRendered += frames
        limiter.limit(&buffer)
        for index in buffer.indices { buffer[index] = buffer[index].clippedSample }
    }

    /// Adds the voices that start before the block of `count` frames from frame `first` ends to those sounding
    /// (one that ended before the block, passed by a start part-way into the pattern, never sounds), and past
    /// `maximumVoices` has the voices that started first fade out in this block.
    private mutating func admitVoices(from first: Int, count: Int) {
        let blockStart = Double(first) / sampleRate
        let blockEnd = Double(first + count) / sampleRate
        var admitted = false
        while reached < byStart.count, schedule.voices[byStart[reached]].start < blockEnd {
            let index = byStart[reached]
            reached += 1
            if schedule.voices[index].end > blockStart {
                sounding.append(index)
                admitted = true
            } else {
                states[index].finished = true
            }
        }
        guard admitted else { return }
        sounding.sort()
        let playing = sounding.filter { !states[$0].stolen }
        guard playing.count > Self.maximumVoices else { return }
        let oldest = playing.sorted { (schedule.voices[$0].start, $0) < (schedule.voices[$1].start, $1) }
        for index in oldest.prefix(playing.count - Self.maximumVoices) { states[index].stolen = true }
    }

    /// Adds `count` frames of voice `index`, the first at absolute frame `first`, to `buffer` from frame `offset`.
    private mutating func mix(voice index: Int, from first: Int, count: Int, into buffer: inout [Float], at offset: Int)
    {
        let voice = schedule.voices[index]
        let blockStart = Double(first) / sampleRate
        let blockEnd = Double(first + count) / sampleRate
        guard blockEnd > voice.start else { return }
        guard blockStart < voice.end else {
            states[index].finished = true
            return
        }
        let clip: AudioClip?
        if case .clip(let waveform) = voice.source {
            guard let found = clips[waveform] else {
                states[index].finished = true
                return
            }
            clip = found
        } else {
            clip = nil
        }
        let levels = (from: gains(voice, clip: clip, at: blockStart), to: gains(voice, clip: clip, at: blockEnd))
        let settings = BlockSettings(voice: voice, controls: schedule.controls, at: blockStart, sampleRate: sampleRate)
        var state = states[index]
        // A stolen voice fades out over this block and ends with it.
        let fadeOut = state.stolen
        for frame in 0..<count {
            let time = Double(first + frame) / sampleRate
            guard time >= voice.start else { continue }
            guard time < voice.end, let sample = state.next(voice, clip, settings, sinceStart: time - voice.start)
            else {
                state.finished = true
                break
            }
            let fraction = Double(frame) / Double(count)
            let envelope = voice.gain(at: time) * (fadeOut ? 1 - fraction : 1)
            let left = levels.from.left + (levels.to.left - levels.from.left) * fraction
            let right = levels.from.right + (levels.to.right - levels.from.right) * fraction
            buffer[2 * (offset + frame)] += sample.left * Float(left * envelope)
            buffer[2 * (offset + frame) + 1] += sample.right * Float(right * envelope)
        }
        if fadeOut { state.finished = true }
        states[index] = state
    }

    /// The voice's volume and pan gains at `time` with the controls applied (the balance law for a stereo clip,
    /// the pan law otherwise).
    private func gains(_ voice: AudioVoice, clip: AudioClip?, at time: Double) -> StereoGains {
        let volume = schedule.controls.applied(.audioVolumeControl, to: voice.volume, at: time)
        let pan = schedule.controls.applied(.audioPanControl, to: voice.pan, at: time)
        let gains = clip?.isStereo == true ? EqualPower.balance(pan) : EqualPower.pan(pan)
        return gains.scaled(by: volume)
    }
}

/// A voice's pitch and brightness over one block of frames.
private struct BlockSettings {
    /// The playback rate (`AudioMapping.playbackRate`).
    let rate: Double
    /// The brightness low-pass factor (1: no filtering).
    let lowPass: Float
    let sampleRate: Double

    init(voice: AudioVoice, controls: AudioControls, at time: Double, sampleRate: Double) {
        rate = AudioMapping.playbackRate(pitch: controls.pitch(voice.pitch, at: time))
        let brightness = controls.applied(.audioBrightnessControl, to: voice.brightness, at: time)
        lowPass = Float(
            AudioMapping.lowPassCoefficient(
                cutoff: AudioMapping.brightnessCutoff(brightness), sampleRate: sampleRate))
        self.sampleRate = sampleRate
    }
}

/// Where a voice's source is: the tone's phase or the clip's position, and the low-pass filter's memory.
private struct VoiceState {
    var started = false
    var finished = false
    /// Taken off by a voice that started later, past `AudioMixer.maximumVoices`: fading out over one block.
    var stolen = false
    /// The tone's phase in cycles, 0 ..< 1.
    var phase = 0.0
    /// The clip's position in frames of the clip.
    var position = 0.0
    var filtered: (left: Float, right: Float) = (0, 0)

    /// The voice's next source frame, filtered, before envelope, volume and pan; `nil` when a clip that does not
    /// loop has run out. The first frame starts the source `sinceStart` seconds in (the output's frames rarely
    /// fall on the event's time exactly).
    mutating func next(
        _ voice: AudioVoice, _ clip: AudioClip?, _ settings: BlockSettings, sinceStart: Double
    ) -> (left: Float, right: Float)? {
        let raw: (left: Float, right: Float)
        if let clip {
            if !started { position = sinceStart * clip.sampleRate * settings.rate }
            if position >= Double(clip.frameCount) {
                guard voice.loops, clip.frameCount > 0 else { return nil }
                position = position.truncatingRemainder(dividingBy: Double(clip.frameCount))
            }
            raw = clip.frame(at: position, wraps: voice.loops)
            position += settings.rate * clip.sampleRate / settings.sampleRate
        } else {
            let frequency = AudioMapping.toneFrequency * settings.rate
            if !started { phase = (sinceStart * frequency).truncatingRemainder(dividingBy: 1) }
            let sample = Float(AudioMapping.tone(phase: phase))
            raw = (sample, sample)
            phase = (phase + frequency / settings.sampleRate).truncatingRemainder(dividingBy: 1)
        }
        started = true
        guard settings.lowPass < 1 else { return raw }
        filtered.left += settings.lowPass * (raw.left - filtered.left)
        filtered.right += settings.lowPass * (raw.right - filtered.right)
        return filtered
    }
}
