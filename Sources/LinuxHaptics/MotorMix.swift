// What the engine does to motor levels between the players and the device: locality (the mix of several players
// is `MotorMagnitudes.summed`, gain is the planner's).
import HapticRendering

extension HapticLocality {
    /// The motors this locality drives. The renderer already routes a pattern's whole level to the chosen
    /// motor; this also holds for timelines made without it.
    func apply(_ mix: MotorMagnitudes) -> MotorMagnitudes {
        switch self {
        case .all, .triggers: mix
        case .leftHandle, .leftTrigger: MotorMagnitudes(strong: mix.strong, weak: 0)
        case .rightHandle, .rightTrigger: MotorMagnitudes(strong: 0, weak: mix.weak)
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
