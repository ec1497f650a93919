// Mixing as it was before the balanced tree: every timeline summed at every breakpoint of the mix. The baseline the
// bench measures `MotorTimeline.mixed` against, and the reference the tests check it with.
package import HapticRendering

/// Sums `timelines` per motor on each stretch between two breakpoints of any of them (each timeline linear there,
/// taken at both ends), clamps each stretch per `MotorTimeline.mixed`'s rule, and leaves silence where none
/// sounds. Its work grows with the breakpoints times the timelines.
package enum SummedAtEveryBreakpoint {
    package static func mixed(_ timelines: [MotorTimeline]) -> MotorTimeline {
        let active = timelines.filter { !$0.segments.isEmpty }
        if active.isEmpty { return .silent }
        let cuts = Set(active.flatMap(\.breakpoints)).sorted()
        var result: [MotorTimeline.Segment] = []
        for (from, to) in zip(cuts, cuts.dropFirst()) where to > from {
            let middle = (from + to) / 2
            var startSum = MotorMagnitudes.off
            var endSum = MotorMagnitudes.off
            for timeline in active {
                guard let index = timeline.segmentIndex(at: middle) else { continue }
                let segment = timeline.segments[index]
                startSum = startSum + segment.levels(at: from)
                endSum = endSum + segment.levels(at: to)
            }
            result += MotorTimeline.clampedPieces(from: from, to: to, start: startSum, end: endSum)
        }
        return MotorTimeline(segments: result)
    }
}
