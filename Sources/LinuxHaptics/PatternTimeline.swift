// How the engine turns a pattern into a player's timeline. The renderer (HapticRendering, being written on
// its own branch) owns this; until it lands the engine uses the stand-in below, which is deliberately
// crude and is replaced, not grown, when the renderer's MotorTimeline is adopted.
public import AHAP

/// Builds the timeline a player walks for `pattern`.
public typealias PatternTimelineBuilder = @Sendable (HapticPattern) -> any PlayerTimelineSource

enum InterimPatternTimeline {
    /// How long a transient drives the motors: rumble motors need time to spin up, a 1-5 ms pulse is not
    /// felt (BRIEF §5). The renderer decides the real shaping; this stand-in holds a fixed pulse.
    static let transientSeconds = 0.05

    /// Each haptic event holds a constant mix over its span (intensity split across the motors by
    /// sharpness: dull to the strong motor, sharp to the weak one); overlapping events add up.
    static func timeline(for pattern: HapticPattern) -> any PlayerTimelineSource {
        let spans: [(start: Double, end: Double, mix: MotorMix)] = pattern.hapticEvents.map { event in
            let length = event.type == .hapticTransient ? transientSeconds : event.effectiveDuration
            let mix = MotorMix(
                strong: event.intensity * (1 - event.sharpness), weak: event.intensity * event.sharpness)
            return (event.relativeTime, event.relativeTime + max(length, 0), mix)
        }
        let breakpoints = Set(spans.flatMap { [$0.start, $0.end] }).sorted()
        let segments = zip(breakpoints, breakpoints.dropFirst()).map { start, end in
            let active = spans.filter { $0.start <= start && $0.end >= end }.map(\.mix)
            return TimelineSegment(start: start, end: end, holding: MotorMix.mixed(active))
        }
        return SegmentTimeline(segments: segments)
    }
}
