// A decoded clip as a sound source.
public import AudioRendering

/// A decoded clip played as it is (a mono clip on both sides), once or looping. The clip must be at the stream's
/// rate (`AudioFile.load` converts).
public struct ClipSource: SoundSource {
    public let clip: AudioClip
    public let loops: Bool
    private var frame = 0

    public init(_ clip: AudioClip, loops: Bool = false) {
        self.clip = clip
        self.loops = loops
    }

    public mutating func renderNext(into buffer: inout [Float]) -> Bool {
        let channels = clip.channelCount
        for index in 0..<buffer.count / 2 {
            if frame >= clip.frameCount, loops, clip.frameCount > 0 { frame = 0 }
            guard frame < clip.frameCount else {
                buffer[2 * index] = 0
                buffer[2 * index + 1] = 0
                continue
            }
            buffer[2 * index] = clip.samples[frame * channels]
            buffer[2 * index + 1] = clip.samples[frame * channels + channels - 1]
            frame += 1
        }
        return loops && clip.frameCount > 0 || frame < clip.frameCount
    }
}
