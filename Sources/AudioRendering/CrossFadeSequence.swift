/// Tracks played one after another, each cross-fading into the next along the equal-power curve
/// (`EqualPower.crossFade`): when each starts, relative to the first, and how long each fade lasts. A fade is
/// at most half of either track it joins, so no track is still fading in when it starts fading out.
public struct CrossFadeSequence: Sendable, Equatable {
    /// Seconds from the first track's start to each track's start.
    public let starts: [Double]
    /// `fades[i]`: the seconds track i takes to give way to track i + 1 (one fewer than the tracks).
    public let fades: [Double]
    /// When the last track ends.
    public let end: Double

    /// `durations` in seconds (a negative or non-finite one counts as 0); `crossFade` the fade asked for.
    public init(durations: [Double], crossFade: Double) {
        let lengths = durations.map { $0.isFinite ? Swift.max($0, 0) : 0 }
        let asked = crossFade.isFinite ? Swift.max(crossFade, 0) : 0
        var starts: [Double] = []
        var fades: [Double] = []
        var next = 0.0
        for (index, length) in lengths.enumerated() {
            starts.append(next)
            guard index + 1 < lengths.count else { break }
            let fade = Self.fade(from: length, into: lengths[index + 1], crossFade: asked)
            fades.append(fade)
            next += length - fade
        }
        self.starts = starts
        self.fades = fades
        end = (starts.last ?? 0) + (lengths.last ?? 0)
    }

    /// The fade from a track of `outgoing` seconds into one of `incoming` seconds: `crossFade`, at most half of
    /// either.
    public static func fade(from outgoing: Double, into incoming: Double, crossFade: Double) -> Double {
        let clean = { (value: Double) in value.isFinite ? Swift.max(value, 0) : 0 }
        return Swift.min(clean(crossFade), clean(outgoing) / 2, clean(incoming) / 2)
    }
}
