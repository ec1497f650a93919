import HapticRendering

/// The left and right gains of one source.
public struct StereoGains: Sendable, Hashable {
    public var left: Double
    public var right: Double

    public init(left: Double, right: Double) {
        self.left = left
        self.right = right
    }

    /// Both sides at `gain`.
    public static func both(_ gain: Double) -> StereoGains { StereoGains(left: gain, right: gain) }

    /// The gains scaled by `factor`.
    public func scaled(by factor: Double) -> StereoGains { StereoGains(left: left * factor, right: right * factor) }
}

/// Equal-power curves: a source panned across the stereo field, and two sources cross-faded, keep the power of
/// what is heard constant (left² + right² = 1, outgoing² + incoming² = 1), so neither dips in the middle.
public enum EqualPower {
    /// The pan law for a mono source, `pan` in -1 (left) ... 1 (right), clamped: the angle (pan + 1) * pi/4
    /// gives left = cos, right = sin. At the centre each side is 1/sqrt(2) (-3 dB).
    public static func pan(_ pan: Double) -> StereoGains {
        let angle = (Swift.min(Swift.max(pan, -1), 1) + 1) * PureMath.pi / 4
        return StereoGains(left: PureMath.cos(angle), right: PureMath.sin(angle))
    }

    /// The balance law for a stereo source: the pan law scaled by sqrt(2) and capped at 1, so the centre leaves
    /// both channels as they are, and moving towards one side attenuates the other side down to silence.
    public static func balance(_ pan: Double) -> StereoGains {
        let gains = self.pan(pan)
        let root2 = 2.0.squareRoot()
        return StereoGains(left: Swift.min(gains.left * root2, 1), right: Swift.min(gains.right * root2, 1))
    }

    /// The gains of a cross-fade `progress` of the way through (0 ... 1, clamped): the outgoing source falls
    /// along a quarter cosine, the incoming one rises along a quarter sine.
    public static func crossFade(progress: Double) -> (outgoing: Double, incoming: Double) {
        let angle = Swift.min(Swift.max(progress, 0), 1) * PureMath.pi / 2
        return (PureMath.cos(angle), PureMath.sin(angle))
    }
}
