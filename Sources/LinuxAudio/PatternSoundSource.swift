public import AHAP
public import AudioRendering

/// A pattern's sound as a player plays it: from a pattern offset, at a playback rate (varispeed: faster is
/// higher), and, for a looping player, starting again from the pattern's beginning every `loopLength` seconds of
/// pattern time, as its haptics do.
public struct PatternSoundSource: SoundSource {
    private let schedule: AudioSchedule
    private let clips: [AudioWaveform: AudioClip]
    /// Pattern frames per output frame's worth of time: the output's rate divided by the playback rate.
    private let mixerRate: Double
    /// Where a loop goes back to 0; nil when the player does not loop.
    private let loop: LoopFrames?
    /// The pass of the loop the mixer is in, and how many frames it lasts.
    private var pass = 0
    private var passLength = 0
    private var mixer: AudioMixer

    /// - Parameters:
    ///   - sampleRate: the stream's rate; the clips must be at it (`PatternSounds` converts them).
    ///   - offset: the pattern time of the first frame.
    ///   - rate: the playback rate (1: as written).
    ///   - loopLength: the pattern time a loop goes back to 0 at; nil when the player does not loop.
    public init(
        schedule: AudioSchedule, clips: [AudioWaveform: AudioClip], sampleRate: Int, offset: Double = 0,
        rate: Double = 1,
        loopLength: Double? = nil
    ) {
        self.schedule = schedule
        self.clips = clips
        let mixerRate = Double(sampleRate) / (rate.isFinite && rate > 0 ? rate : 1)
        self.mixerRate = mixerRate
        loop = loopLength.map { LoopFrames(length: $0, rate: mixerRate) }
        passLength = loop?.length(ofPass: 0) ?? 0
        mixer = AudioMixer(schedule: schedule, clips: clips, sampleRate: mixerRate, startingAt: offset)
    }

    public mutating func renderNext(into buffer: inout [Float]) -> Bool {
        guard let loop else {
            mixer.render(into: &buffer)
            return !mixer.isFinished
        }
        // Looping: the mixer is rendered up to the loop's end, then a fresh one takes over from pattern time 0.
        let frames = buffer.count / 2
        var done = 0
        var block: [Float] = []
        while done < frames {
            if mixer.framesRendered >= passLength {
                pass += 1
                passLength = loop.length(ofPass: pass)
                mixer = AudioMixer(schedule: schedule, clips: clips, sampleRate: mixerRate)
            }
            let count = min(frames - done, passLength - mixer.framesRendered)
            if block.count != 2 * count { block = [Float](repeating: 0, count: 2 * count) }
            mixer.render(into: &block)
            for index in 0..<(2 * count) { buffer[2 * done + index] = block[index] }
            done += count
        }
        return true
    }
}
