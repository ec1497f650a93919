// A file read as it plays, as a sound source.

/// A file played as it is read (`AudioFileStream`), once or looping: music, which is too long to decode whole.
/// Opened, and its format checked, when made; then handed to one `MixingStream`, whose thread alone reads it
/// (hence `@unchecked Sendable`: a class, so the stream reads the one reader there is, and nobody else may).
public final class FileSource: SoundSource, @unchecked Sendable {
    private let reader: AudioFileStream
    public let loops: Bool
    /// Frames read since the file last started again: a read that ends exactly at the file's end leaves the next
    /// one empty and finished, which is the end of a pass, not an empty file.
    private var framesSinceRewind = 0

    /// The file at `path`, converted to `sampleRate` (the stream's output's rate) as it plays.
    public init(path: String, sampleRate: Int, loops: Bool = false) throws(AudioFileError) {
        reader = try AudioFileStream(path: path, sampleRate: sampleRate)
        self.loops = loops
    }

    /// The file's length in seconds (one pass, when it loops).
    public var duration: Double { reader.duration }

    public func renderNext(into buffer: inout [Float]) -> Bool {
        let frames = buffer.count / 2
        var filled = 0
        do {
            while filled < frames {
                let chunk = try reader.read(frames: frames - filled)
                let channels = reader.channelCount
                for frame in 0..<chunk.count / channels {
                    buffer[2 * (filled + frame)] = chunk[frame * channels]
                    buffer[2 * (filled + frame) + 1] = chunk[frame * channels + channels - 1]
                }
                filled += chunk.count / channels
                framesSinceRewind += chunk.count / channels
                if reader.isFinished {
                    // An empty file would loop for ever without a frame.
                    guard loops, framesSinceRewind > 0 else { break }
                    try reader.rewind()
                    framesSinceRewind = 0
                }
            }
        } catch {
            // A read that fails mid-way (the file truncated or removed) ends the sound.
            for index in (2 * filled)..<buffer.count { buffer[index] = 0 }
            return false
        }
        for index in (2 * filled)..<buffer.count { buffer[index] = 0 }
        return filled == frames && (loops || !reader.isFinished)
    }
}
