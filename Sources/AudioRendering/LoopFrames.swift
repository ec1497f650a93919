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

    /// The first pass from `pass` on that lasts more than `frames` frames (one that holds a voice starting at frame
    /// `frames` of the loop); nil when none does, or none within the frames the clock counts. Passes last one of
    /// two whole numbers of frames around the loop's length, the longer ones spread among the others: a voice
    /// starting on the shorter passes' last frame sounds only in the longer ones, which may be many passes apart.
    public func firstPass(from pass: Int, longerThan frames: Int) -> Int? {
        let pass = max(pass, 0)
        if length(ofPass: pass) > frames { return pass }
        // Only a voice on the shorter passes' last frame is in some passes and not others.
        guard frames < Int(framesPerPass.rounded(.up)), framesPerPass < Double(FrameCount.maximum) else { return nil }
        // The longer passes before pass n: start(n) - n·frames, which grows by one at each. The first pass from
        // `pass` on that is longer ends where that count first exceeds its value at `pass`.
        let before = start(ofPass: pass) - pass * frames
        let fraction = framesPerPass - framesPerPass.rounded(.down)
        let reach = 2 + 1 / fraction
        guard reach < Double(FrameCount.maximum) / framesPerPass - Double(pass) else { return nil }
        var low = pass + 1
        var high = pass + Int(reach)
        while low < high {
            let middle = low + (high - low) / 2
            if start(ofPass: middle) - middle * frames > before { high = middle } else { low = middle + 1 }
        }
        return low - 1
    }

    /// The pass frame `frame` (not below 0) lies in.
    public func pass(containing frame: Int) -> Int {
        var pass = Int((Double(max(frame, 0)) / framesPerPass).rounded(.down))
        while pass > 0, start(ofPass: pass) > frame { pass -= 1 }
        while start(ofPass: pass + 1) <= frame { pass += 1 }
        return pass
    }
}
