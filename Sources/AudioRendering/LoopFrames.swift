/// A loop's passes as frames: a loop of `length` seconds of pattern time, on a time line of `rate` frames a second,
/// comes back to its beginning at frame `start(ofPass: k)`, counted from its first pass's beginning. Each pass's
/// start is rounded on its own from k × length, so that the passes keep the engine's clock however many there are:
/// a length rounded once and repeated drifts by its rounding every pass (on the voice coils a 0.1234 s loop, 370.2
/// frames at 3 kHz played as 370, came round 66 ms early after 1000 passes, until 7 December). A pass lasts at
/// least one frame.
public struct LoopFrames: Sendable, Hashable {
    /// Frames a pass lasts, unrounded: at least 1.
    private let framesPerPass: Double

    public init(length: Double, rate: Double) {
        let frames = length * rate
        framesPerPass = frames.isFinite ? max(1, frames) : Double(FrameCount.maximum)
    }

    /// The frame pass `pass` (0 for the first) begins at.
    public func start(ofPass pass: Int) -> Int {
        FrameCount.of(Double(pass) * framesPerPass, at: 1)
    }

    /// How many frames pass `pass` lasts: one or the other whole number around the loop's length.
    public func length(ofPass pass: Int) -> Int {
        start(ofPass: pass + 1) - start(ofPass: pass)
    }

    /// The pass frame `frame` (not below 0) lies in.
    public func pass(containing frame: Int) -> Int {
        var pass = Int((Double(max(frame, 0)) / framesPerPass).rounded(.down))
        while pass > 0, start(ofPass: pass) > frame { pass -= 1 }
        while start(ofPass: pass + 1) <= frame { pass += 1 }
        return pass
    }
}
