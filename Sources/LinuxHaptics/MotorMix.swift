// What the engine does to motor levels between the players and the device: the instantaneous mix of several
// players (the renderer's rule for timelines, applied at one instant), and locality (gain is the planner's).
public import HapticRendering

extension MotorMagnitudes {
    /// Several players at one instant: summed per motor and clamped to 1, the renderer's `MotorTimeline.mixed`
    /// rule (also what ff-memless does with effects that overlap on the device, so a prepared pulse on its own
    /// slot and the scheduled mix combine the same way).
    public static func summed(_ parts: [MotorMagnitudes]) -> MotorMagnitudes {
        parts.reduce(MotorMagnitudes.off) {
            MotorMagnitudes(strong: $0.strong + $1.strong, weak: $0.weak + $1.weak)
        }.clamped()
    }

    /// Each motor within 0...1; NaN counts as off.
    public func clamped() -> MotorMagnitudes {
        func clamp(_ value: Double) -> Double { value.isFinite ? min(max(value, 0), 1) : (value > 0 ? 1 : 0) }
        return MotorMagnitudes(strong: clamp(strong), weak: clamp(weak))
    }
}

extension HapticLocality {
    /// The motors this locality drives. The renderer already routes a pattern's whole level to the chosen
    /// motor; this also holds for timelines made without it.
    func apply(_ mix: MotorMagnitudes) -> MotorMagnitudes {
        switch self {
        case .all: mix
        case .leftHandle: MotorMagnitudes(strong: mix.strong, weak: 0)
        case .rightHandle: MotorMagnitudes(strong: 0, weak: mix.weak)
        }
    }
}

extension MotorTimeline.Segment {
    var isConstant: Bool { startLevels == endLevels }
}

extension MotorTimeline {
    /// The segment holding `offset`, nil before 0 and from `endTime` on.
    func segment(at offset: Double) -> Segment? { segmentIndex(at: offset).map { segments[$0] } }
}
