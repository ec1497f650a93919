// The seam between the engine and the renderer: what a player needs from a pattern is its motor levels over
// pattern time, as segments with exact breakpoints, linear inside. The renderer (HapticRendering) produces
// that; the engine only walks it, mixes it and sends it at the right moments.

/// A stretch of pattern time over which both motors move linearly from `from` to `to`.
public struct TimelineSegment: Sendable, Hashable {
    /// Pattern time in seconds where the segment starts (inclusive) and ends (exclusive).
    public var start: Double
    public var end: Double
    public var from: MotorMix
    public var to: MotorMix

    public init(start: Double, end: Double, from: MotorMix, to: MotorMix) {
        self.start = start
        self.end = end
        self.from = from
        self.to = to
    }

    /// A segment that holds one mix.
    public init(start: Double, end: Double, holding mix: MotorMix) {
        self.init(start: start, end: end, from: mix, to: mix)
    }

    public var isConstant: Bool { from == to }

    public func levels(at offset: Double) -> MotorMix {
        guard end > start else { return from }
        return from.interpolated(to: to, fraction: (offset - start) / (end - start))
    }
}

/// A pattern's motor output over pattern time, as a player plays it.
public protocol PlayerTimelineSource: Sendable {
    /// Seconds of pattern time until the last motor change (the pattern's end).
    var duration: Double { get }
    /// The segment that holds `offset` (`start <= offset < end`), silence included; nil at or past the end.
    func segment(at offset: Double) -> TimelineSegment?
}

/// A timeline given as ordered, gap-free segments from 0 to the end. The form the engine's own tests build
/// by hand, and the form a rendered pattern is adapted into.
public struct SegmentTimeline: PlayerTimelineSource {
    public let segments: [TimelineSegment]

    /// `segments` must be sorted by start; gaps between them are silence.
    public init(segments: [TimelineSegment]) {
        var filled: [TimelineSegment] = []
        var cursor = 0.0
        for segment in segments where segment.end > segment.start {
            if segment.start > cursor { filled.append(TimelineSegment(start: cursor, end: segment.start, holding: .off)) }
            filled.append(segment)
            cursor = max(cursor, segment.end)
        }
        self.segments = filled
    }

    public var duration: Double { segments.last?.end ?? 0 }

    public func segment(at offset: Double) -> TimelineSegment? {
        guard offset >= 0, offset < duration else { return nil }
        // Binary search: long patterns (the 160 KB corpus file) have thousands of segments.
        var low = 0
        var high = segments.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if segments[middle].start <= offset { low = middle } else { high = middle - 1 }
        }
        return segments[low]
    }
}
