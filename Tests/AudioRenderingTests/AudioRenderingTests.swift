import AHAP
import AudioRendering
import Glibc
import HapticRendering
import Testing

/// Builders for audio events.
enum Sound {
    static func tone(at time: Double, duration: Double, _ parameters: [(HapticEvent.ParameterID, Double)] = [])
        -> HapticEvent
    {
        HapticEvent(
            type: .audioContinuous, parameters: parameters.map { HapticEventParameter(parameterID: $0.0, value: $0.1) },
            relativeTime: time, duration: duration)
    }

    static func custom(
        _ path: String, at time: Double, duration: Double? = nil, envelope: Bool? = nil, loop: Bool? = nil,
        _ parameters: [(HapticEvent.ParameterID, Double)] = []
    ) -> HapticEvent {
        HapticEvent(
            audioWaveformPath: path,
            parameters: parameters.map { HapticEventParameter(parameterID: $0.0, value: $0.1) },
            relativeTime: time, duration: duration, usesVolumeEnvelope: envelope, loopEnabled: loop)
    }

    static func pattern(_ events: [HapticEvent], parameters: [HapticDynamicParameter] = []) -> HapticPattern {
        HapticPattern(events: events, parameters: parameters, parameterCurves: [])
    }

    /// Renders `pattern` at `rate` for `frames` frames in one call.
    static func render(
        _ pattern: HapticPattern, clips: [AudioWaveform: AudioClip] = [:], rate: Double, frames: Int
    ) -> [Float] {
        let schedule = AudioSchedule(pattern: pattern, clipDurations: clips.mapValues(\.duration))
        var mixer = AudioMixer(schedule: schedule, clips: clips, sampleRate: rate)
        var buffer = [Float](repeating: 0, count: 2 * frames)
        mixer.render(into: &buffer)
        return buffer
    }
}

private let centre = Float(1 / 2.0.squareRoot())

@Suite("Audio schedule")
struct AudioScheduleTests {
    @Test("a sustained tone attacks, holds and releases over the adjusters' seconds")
    func sustainedEnvelope() throws {
        let event = Sound.tone(at: 1, duration: 2, [(.attackTime, 0.5), (.releaseTime, 0.5)])
        let voice = try #require(AudioSchedule(pattern: Sound.pattern([event])).voices.first)
        let ramp = EnvelopeTiming.seconds(forAdjuster: 0.5)
        #expect(voice.source == .tone)
        #expect(voice.start == 1 && abs(voice.end - (3 + ramp)) < 1e-12)
        #expect(voice.gain(at: 0.99) == 0)
        #expect(abs(voice.gain(at: 1 + ramp / 2) - 0.5) < 1e-12)
        #expect(voice.gain(at: 2) == 1)
        #expect(abs(voice.gain(at: 3 + ramp / 4) - 0.75) < 1e-12)
        #expect(voice.gain(at: 3 + ramp) == 0)
    }

    @Test("a tone that is not sustained decays to silence, at least over the shortest decay")
    func decayingEnvelope() throws {
        let decaying = Sound.tone(at: 0, duration: 1, [(.sustained, 0), (.decayTime, 0.5)])
        let voice = try #require(AudioSchedule(pattern: Sound.pattern([decaying])).voices.first)
        let decay = EnvelopeTiming.seconds(forAdjuster: 0.5)
        #expect(abs(voice.gain(at: decay / 2) - 0.5) < 1e-12)
        #expect(voice.gain(at: decay) == 0 && abs(voice.end - decay) < 1e-12)
        let click = Sound.tone(at: 0, duration: 1, [(.sustained, 0)])
        let shortest = try #require(AudioSchedule(pattern: Sound.pattern([click])).voices.first)
        #expect(abs(shortest.end - AudioMapping.shortestDecay) < 1e-12)
    }

    @Test("a file event lasts its duration, or its file at its pitch; a missing file is named and skipped")
    func customDurations() throws {
        let pattern = Sound.pattern([
            Sound.custom("a.wav", at: 0.5),
            Sound.custom("a.wav", at: 0, [(.audioPitch, 1)]),
            Sound.custom("a.wav", at: 0, duration: 0.25),
            Sound.custom("gone.wav", at: 0),
            HapticEvent(type: .hapticTransient, relativeTime: 0),
        ])
        let schedule = AudioSchedule(pattern: pattern, clipDurations: ["a.wav": 2])
        #expect(schedule.voices.map(\.eventIndex) == [0, 1, 2])
        #expect(schedule.voices.map(\.end) == [2.5, 1, 0.25])
        #expect(schedule.missingClips == ["gone.wav"])
        #expect(schedule.end == 2.5)
        #expect(schedule.voices[0].gain(at: 0.5) == 1, "no envelope without EventWaveformUseVolumeEnvelope")
    }

    @Test("an event playing a registered resource takes its clip by identifier, apart from a file's")
    func resourceClips() throws {
        let resource = AudioResourceID(rawValue: 3)
        var named = Sound.custom("a.wav", at: 0)
        named.audioResourceID = resource
        let pattern = Sound.pattern([
            HapticEvent(audioResourceID: resource, relativeTime: 0.5), named, Sound.custom("a.wav", at: 0),
            HapticEvent(audioResourceID: AudioResourceID(rawValue: 4), relativeTime: 0),
        ])
        let schedule = AudioSchedule(pattern: pattern, clipDurations: [.resource(resource): 1, "a.wav": 2])
        #expect(
            schedule.voices.map(\.source) == [.clip(.resource(resource)), .clip(.resource(resource)), .clip("a.wav")])
        #expect(schedule.voices.map(\.end) == [1.5, 1, 2])
        #expect(schedule.missingClips == [.resource(AudioResourceID(rawValue: 4))])
    }

    @Test("a file event with its volume envelope attacks like a tone")
    func customEnvelope() throws {
        let event = Sound.custom("a.wav", at: 0, duration: 1, envelope: true, [(.attackTime, 1)])
        let voice = try #require(
            AudioSchedule(pattern: Sound.pattern([event]), clipDurations: ["a.wav": 5]).voices.first)
        #expect(abs(voice.gain(at: 0.5) - 0.5) < 1e-12, "AttackTime 1 is a 1 s attack")
    }

    @Test("the audio time controls lengthen the attack from the event's start")
    func attackControl() throws {
        let event = Sound.tone(at: 0, duration: 2)
        let control = HapticDynamicParameter(parameterID: .audioAttackTimeControl, value: 1, relativeTime: 0)
        let voice = try #require(AudioSchedule(pattern: Sound.pattern([event], parameters: [control])).voices.first)
        #expect(abs(voice.gain(at: 0.25) - 0.25) < 1e-12)
    }

    @Test("a clip must be mono or stereo, of whole frames, at a positive rate")
    func clipValidation() {
        #expect(AudioClip(sampleRate: 48000, channelCount: 3, samples: [0, 0, 0]) == nil)
        #expect(AudioClip(sampleRate: 48000, channelCount: 2, samples: [0, 0, 0]) == nil)
        #expect(AudioClip(sampleRate: 0, channelCount: 1, samples: [0]) == nil)
        #expect(AudioClip(sampleRate: 8, channelCount: 2, samples: [0, 0, 1, 1])?.duration == 0.25)
    }
}

@Suite("Audio mixer")
struct AudioMixerTests {
    @Test("a centred tone renders as the tone at -3 dB on both sides, from its start")
    func toneSamples() {
        let rate = 48000.0
        let output = Sound.render(Sound.pattern([Sound.tone(at: 0.001, duration: 0.01)]), rate: rate, frames: 600)
        for frame in 0..<600 {
            let time = Double(frame) / rate
            let expected =
                time >= 0.001 && time < 0.011
                ? Float(AudioMapping.tone(phase: (time - 0.001) * AudioMapping.toneFrequency)) * centre : 0
            #expect(abs(output[2 * frame] - expected) < 1e-5, "left, frame \(frame)")
            #expect(abs(output[2 * frame + 1] - expected) < 1e-5, "right, frame \(frame)")
        }
    }

    @Test("a looped clip wraps to its start until the event ends; an unlooped one stops at its end")
    func loopWrap() throws {
        let clip = try #require(AudioClip(sampleRate: 8, channelCount: 1, samples: [0.1, 0.2, 0.3, 0.4]))
        let looped = Sound.render(
            Sound.pattern([Sound.custom("c", at: 0, duration: 1.5, loop: true)]), clips: ["c": clip], rate: 8,
            frames: 14)
        let lefts = stride(from: 0, to: looped.count, by: 2).map { looped[$0] / centre }
        let expected: [Float] = [0.1, 0.2, 0.3, 0.4, 0.1, 0.2, 0.3, 0.4, 0.1, 0.2, 0.3, 0.4, 0, 0]
        #expect(zip(lefts, expected).allSatisfy { abs($0 - $1) < 1e-6 }, "\(lefts)")
        let once = Sound.render(
            Sound.pattern([Sound.custom("c", at: 0, duration: 1.5)]), clips: ["c": clip], rate: 8, frames: 8)
        #expect(once[8...].allSatisfy { $0 == 0 }, "an unlooped clip ends with its file")
    }

    @Test("pitch +1 reads the clip at twice the rate, interpolating between its frames")
    func pitchReadsFaster() throws {
        let ramp = (0..<16).map { Float($0) / 16 }
        let clip = try #require(AudioClip(sampleRate: 100, channelCount: 1, samples: ramp))
        let up = Sound.render(
            Sound.pattern([Sound.custom("r", at: 0, [(.audioPitch, 1)])]), clips: ["r": clip], rate: 100, frames: 10)
        let lefts = stride(from: 0, to: 16, by: 2).map { up[$0] / centre }
        #expect(zip(lefts, (0..<8).map { Float(2 * $0) / 16 }).allSatisfy { abs($0 - $1) < 1e-6 }, "\(lefts)")
        #expect(up[16...].allSatisfy { $0 == 0 }, "the file ends after half its length")
        let down = Sound.render(
            Sound.pattern([Sound.custom("r", at: 0, [(.audioPitch, -1)])]), clips: ["r": clip], rate: 100, frames: 4)
        #expect(abs(down[2] / centre - 0.5 / 16) < 1e-6, "half-way between the first two frames")
    }

    @Test("pan and volume: a stereo clip keeps its channels at the centre, a mono one is panned by the law")
    func panAndVolume() throws {
        let stereo = try #require(AudioClip(sampleRate: 10, channelCount: 2, samples: [0.5, -0.25, 0.5, -0.25]))
        let centred = Sound.render(
            Sound.pattern([Sound.custom("s", at: 0, [(.audioVolume, 0.5)])]), clips: ["s": stereo], rate: 10,
            frames: 2)
        #expect(abs(centred[0] - 0.25) < 1e-6 && abs(centred[1] + 0.125) < 1e-6)
        let mono = try #require(AudioClip(sampleRate: 10, channelCount: 1, samples: [0.8, 0.8]))
        let right = Sound.render(
            Sound.pattern([Sound.custom("m", at: 0, [(.audioPan, 0.5)])]), clips: ["m": mono], rate: 10, frames: 1)
        let gains = EqualPower.pan(0.5)
        #expect(abs(Double(right[0]) - 0.8 * gains.left) < 1e-6 && abs(Double(right[1]) - 0.8 * gains.right) < 1e-6)
    }

    @Test("the volume control multiplies, and brightness below 1 takes high frequencies away")
    func volumeControlAndBrightness() {
        let tone = Sound.tone(at: 0, duration: 0.1)
        let half = HapticDynamicParameter(parameterID: .audioVolumeControl, value: 0.5, relativeTime: 0)
        let full = Sound.render(Sound.pattern([tone]), rate: 48000, frames: 4800)
        let quieter = Sound.render(Sound.pattern([tone], parameters: [half]), rate: 48000, frames: 4800)
        #expect(zip(full, quieter).allSatisfy { abs($0 / 2 - $1) < 1e-6 })
        let dark = Sound.render(
            Sound.pattern([Sound.tone(at: 0, duration: 0.1, [(.audioBrightness, 0)])]), rate: 48000, frames: 4800)
        // The one-pole's gain |a / (1 - (1 - a) e^-jw)| at each partial of the tone, against the tone's power.
        let a = AudioMapping.lowPassCoefficient(cutoff: AudioMapping.brightnessCutoff(0), sampleRate: 48000)
        var filteredPower = 0.0
        for (index, amplitude) in AudioMapping.toneHarmonics.enumerated() {
            let omega = 2 * Double.pi * AudioMapping.toneFrequency * Double(index + 1) / 48000
            let real = 1 - (1 - a) * cos(omega)
            let imaginary = (1 - a) * sin(omega)
            filteredPower += amplitude * amplitude * a * a / (real * real + imaginary * imaginary)
        }
        let expected = (filteredPower / AudioMapping.toneHarmonics.reduce(0) { $0 + $1 * $1 }).squareRoot()
        let ratio = Double(rms(dark) / rms(full))
        #expect(abs(ratio - expected) < 0.02, "200 Hz one-pole on the 220 Hz tone: \(ratio), expected \(expected)")
    }

    /// Values a caller building patterns in code can give, which trapped until 6 December: a NaN pitch (the
    /// rate became NaN, and so did the clip's position), a clip at a rate near Double's largest (its position
    /// became infinite), a mixer at a rate so small its limiter's exponent left `Int`'s range; a mixer at a rate
    /// that is not a positive number never finished.
    @Test("a NaN pitch plays at the file's own rate, and no rate a clip or a mixer is given traps")
    func edgeValuesPlayOrFinish() throws {
        let clip = try #require(
            AudioClip(sampleRate: 8000, channelCount: 1, samples: [Float](repeating: 0.5, count: 800)))
        let nanPitch = Sound.pattern([Sound.custom("a.wav", at: 0, loop: true, [(.audioPitch, .nan)])])
        let asWritten = Sound.pattern([Sound.custom("a.wav", at: 0, loop: true)])
        #expect(
            Sound.render(nanPitch, clips: ["a.wav": clip], rate: 8000, frames: 400)
                == Sound.render(asWritten, clips: ["a.wav": clip], rate: 8000, frames: 400))
        #expect(AudioClip(sampleRate: 1.7e308, channelCount: 1, samples: [0]) == nil)
        #expect(AudioClip(sampleRate: AudioClip.maximumSampleRate, channelCount: 1, samples: [0]) != nil)
        let fastest = try #require(
            AudioClip(
                sampleRate: AudioClip.maximumSampleRate, channelCount: 1, samples: [Float](repeating: 0.5, count: 10)))
        _ = Sound.render(asWritten, clips: ["a.wav": fastest], rate: 8000, frames: 400)
        for rate in [1e-300, -48000, .nan, .infinity] {
            var mixer = AudioMixer(
                schedule: AudioSchedule(pattern: asWritten), clips: ["a.wav": clip], sampleRate: rate)
            var buffer = [Float](repeating: 0, count: 64)
            mixer.render(into: &buffer)
            #expect(rate == 1e-300 || mixer.isFinished, "a mixer at \(rate) Hz has nothing to play")
        }
    }

    @Test("rendering in small blocks gives the same frames as one large block")
    func blockIndependence() {
        let pattern = Sound.pattern([Sound.tone(at: 0.0013, duration: 0.02, [(.attackTime, 0.3), (.audioPan, -0.4)])])
        let whole = Sound.render(pattern, rate: 44100, frames: 1000)
        var mixer = AudioMixer(schedule: AudioSchedule(pattern: pattern), clips: [:], sampleRate: 44100)
        var pieces: [Float] = []
        for size in [1, 63, 64, 65, 300, 507] {
            var buffer = [Float](repeating: 1, count: 2 * size)
            mixer.render(into: &buffer)
            pieces += buffer
        }
        #expect(mixer.framesRendered == 1000)
        #expect(zip(whole, pieces).allSatisfy { abs($0 - $1) < 1e-4 })
    }

    @Test("past the most voices at once, the voice that started first fades out over one block; the rest play as alone")
    func voicesPastTheMostSteal() {
        // One tone from 0, then 32 from 0.5 s (frame 4000 at 8 kHz, within the block of frames 3968-4031): the
        // first is taken off in that block, and from the next on the mix is the 32 later tones' alone.
        let quiet: [(HapticEvent.ParameterID, Double)] = [(.audioVolume, 0.02)]
        let first = Sound.tone(at: 0, duration: 2, quiet)
        let later = (0..<AudioMixer.maximumVoices).map { _ in Sound.tone(at: 0.5, duration: 1, quiet) }
        let all = Sound.render(Sound.pattern([first] + later), rate: 8000, frames: 8000)
        let alone = Sound.render(Sound.pattern([first]), rate: 8000, frames: 8000)
        let withoutFirst = Sound.render(Sound.pattern(later), rate: 8000, frames: 8000)
        #expect(all[..<(2 * 3968)] == alone[..<(2 * 3968)], "before the later tones it is the first tone's")
        #expect(all[(2 * 4032)...] == withoutFirst[(2 * 4032)...], "after its block the first tone is heard")
        // Within the block it fades: at the block's last frame before the later tones start (frame 3999, 31 of
        // 64 frames in) it is heard at about half its level.
        let fading = all[2 * 3999] / alone[2 * 3999]
        #expect(abs(fading - (1 - 31.0 / 64)) < 1e-3, "the first tone at \(fading) of its level")
        // One voice more than the most, all from 0: the one first in the pattern is the one taken off.
        let same = (0...AudioMixer.maximumVoices).map { _ in Sound.tone(at: 0, duration: 1, quiet) }
        let capped = Sound.render(Sound.pattern(same), rate: 8000, frames: 1000)
        let most = Sound.render(Sound.pattern(Array(same.dropFirst())), rate: 8000, frames: 1000)
        #expect(capped[128...] == most[128...])
    }

    private func rms(_ samples: [Float]) -> Float {
        (samples.reduce(0) { $0 + $1 * $1 } / Float(samples.count)).squareRoot()
    }
}

/// What reaches an output is a number within -1 ... 1, whatever a file holds.
struct ClippedSampleTests {
    @Test func aSampleIsClippedToPlusMinusOneAndNotANumberIsSilence() {
        #expect(Float(0.5).clippedSample == 0.5)
        #expect(Float(2).clippedSample == 1 && Float(-2).clippedSample == -1)
        #expect(Float.infinity.clippedSample == 1 && (-Float.infinity).clippedSample == -1)
        #expect(Float.nan.clippedSample == 0)
    }

    /// A float file's NaN, in a clip mixed with a tone, leaves the mix a number at every frame.
    @Test func aNotANumberInAClipLeavesTheMixANumber() throws {
        let clip = try #require(AudioClip(sampleRate: 8000, channelCount: 1, samples: [0.2, .nan, 0.2, 0.2]))
        let mix = Sound.render(
            Sound.pattern([Sound.custom("odd.wav", at: 0), Sound.tone(at: 0, duration: 0.001)]),
            clips: ["odd.wav": clip], rate: 8000, frames: 8)
        #expect(mix.allSatisfy { !$0.isNaN && abs($0) <= 1 }, "\(mix)")
    }
}

/// Times that a caller may pass (a seek far past the end, a fade over an infinite time) become frames without
/// trapping.
struct LoopFramesTests {
    /// A loop whose length is no whole number of frames: its passes begin where k × length rounds to, so that pass
    /// 1000 begins where the clock says, not 1000 roundings away from it.
    @Test(arguments: [(length: 0.1234, rate: 3000.0), (length: 0.5, rate: 3000 / 1.3), (length: 0.25, rate: 48000.0)])
    func passesBeginWhereTheClockSaysHoweverManyThereAre(length: Double, rate: Double) {
        let loop = LoopFrames(length: length, rate: rate)
        for pass in [0, 1, 2, 999, 1000, 1_000_000] {
            let exact = Double(pass) * length * rate
            #expect(abs(Double(loop.start(ofPass: pass)) - exact) <= 0.5, "pass \(pass)")
        }
        #expect(Set((0..<2000).map { loop.length(ofPass: $0) }).count <= 2, "every pass lasts one of two lengths")
    }

    @Test func aFrameLiesInThePassWhoseStartItIsAtOrAfterAndBeforeTheNext() {
        let loop = LoopFrames(length: 0.1234, rate: 3000)
        for frame in [0, 1, 369, 370, 371, 740, 741, 370_199, 370_200, 370_201, 37_020_000] {
            let pass = loop.pass(containing: frame)
            #expect(loop.start(ofPass: pass) <= frame && frame < loop.start(ofPass: pass + 1), "frame \(frame)")
        }
    }

    /// The first pass that holds a voice starting on frame `frames`: the one asked about when it is long enough,
    /// the next longer one when the voice starts on the shorter passes' last frame (as many passes apart as the
    /// loop's fraction of a frame says), none when no pass is that long.
    @Test(arguments: [300.2, 300.001, 300.999, 2.5])
    func theFirstPassLongerThanAVoicesFrameIsTheFirstThatHoldsIt(framesPerPass: Double) {
        let loop = LoopFrames(length: framesPerPass, rate: 1)
        let shorter = Int(framesPerPass.rounded(.down))
        for from in [0, 1, 7, 1234] {
            #expect(loop.firstPass(from: from, longerThan: shorter - 1) == from)
            let holding = (from..<(from + 5000)).first { loop.length(ofPass: $0) > shorter }
            #expect(loop.firstPass(from: from, longerThan: shorter) == holding, "from pass \(from)")
            #expect(loop.firstPass(from: from, longerThan: shorter + 1) == nil)
        }
        #expect(LoopFrames(length: 300, rate: 1).firstPass(from: 3, longerThan: 300) == nil, "every pass lasts 300")
    }

    /// A loop shorter than a frame, or of no finite length, still moves on: each pass lasts at least a frame.
    @Test func aPassLastsAtLeastOneFrame() {
        for loop in [LoopFrames(length: 1e-9, rate: 3000), LoopFrames(length: 0, rate: 3000)] {
            #expect((0..<10).map { loop.start(ofPass: $0) } == Array(0..<10))
            #expect(loop.pass(containing: 7) == 7)
        }
        let endless = LoopFrames(length: .infinity, rate: 3000)
        #expect(endless.pass(containing: 1 << 40) == 0)
    }
}

struct FrameCountTests {
    @Test func aTimeBecomesRoundedFramesWithinZeroAndTwoToThe53() {
        #expect(FrameCount.of(0.5, at: 48000) == 24000)
        #expect(FrameCount.of(1.00001, at: 8000) == 8000)
        #expect(FrameCount.of(-1, at: 48000) == 0 && FrameCount.of(.nan, at: 48000) == 0)
        #expect(FrameCount.of(1e15, at: 48000) == FrameCount.maximum)
        #expect(FrameCount.of(.infinity, at: 48000) == FrameCount.maximum)
    }

    @Test func aMixerStartedFarPastItsEndRendersSilence() {
        let schedule = AudioSchedule(pattern: Sound.pattern([Sound.tone(at: 0, duration: 0.1)]))
        for offset in [1e15, .greatestFiniteMagnitude, .infinity] {
            var mixer = AudioMixer(schedule: schedule, clips: [:], sampleRate: 48000, startingAt: offset)
            var buffer = [Float](repeating: 1, count: 2 * 64)
            mixer.render(into: &buffer)
            #expect(buffer.allSatisfy { $0 == 0 }, "\(offset)")
        }
    }
}
