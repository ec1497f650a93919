// What a `MixingStream` mixes: anything that makes stereo frames block after block.
public import AudioRendering

/// Something that makes stereo frames at the stream's rate, block after block: a pattern's `AudioMixer`, a
/// `ClipSource`.
public protocol SoundSource: Sendable {
    /// Overwrites `buffer` (2 samples per frame) with the next frames; returns false once the source has ended
    /// (frames after its end are silence).
    mutating func renderNext(into buffer: inout [Float]) -> Bool
    /// Whether a start that has passed by the first period it could be heard in plays the source from its first
    /// frame, later than asked, rather than skipping what has passed (`MixingStream.play(_:at:gain:)`); such a
    /// source's end (`MixingStream.stop(_:atNanoseconds:)`) moves as late as it runs, after a stall of the stream's
    /// writer too. False unless a source says otherwise: a sound in step with haptics keeps its time.
    var playsWholeWhenLate: Bool { get }
}

extension SoundSource {
    public var playsWholeWhenLate: Bool { false }
}

extension AudioMixer: SoundSource {
    public mutating func renderNext(into buffer: inout [Float]) -> Bool {
        render(into: &buffer)
        return !isFinished
    }
}
