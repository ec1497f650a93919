/// What the motors should do over time, exactly: contiguous linear segments from 0 to `endTime`, silent from
/// `endTime` on. Values may jump between segments (a transient's onset); within a segment they move linearly.
///
/// Time operations (`scaled`, `slice`, `shifted`, `looped`) and mixing (`mixed`) act on this output, so
/// playback rate, seek, loops and several players per device compose without rendering again.
public struct MotorTimeline: Sendable, Hashable {
    /// One linear piece: `startLevels` at `start` (inclusive) moving linearly to `endLevels` at `end`
    /// (exclusive: the next segment's `startLevels` hold at `end`).
    public struct Segment: Sendable, Hashable {
        public var start: Double
        public var end: Double
        public var startLevels: MotorMagnitudes
        public var endLevels: MotorMagnitudes

        public init(start: Double, end: Double, startLevels: MotorMagnitudes, endLevels: MotorMagnitudes) {
            self.start = start
            self.end = end
            self.startLevels = startLevels
            self.endLevels = endLevels
        }

        /// Linear interpolation inside the segment (the formula, also valid at `end` as a limit).
        public func levels(at time: Double) -> MotorMagnitudes {
            let span = end - start
            guard span > 0 else { return startLevels }
            let fraction = (time - start) / span
            return MotorMagnitudes(
                strong: startLevels.strong + (endLevels.strong - startLevels.strong) * fraction,
                weak: startLevels.weak + (endLevels.weak - startLevels.weak) * fraction)
        }

        /// `levels(at:)`, but its own end points' levels as they are, with no rounding of the line through them.
        func exactLevels(at time: Double) -> MotorMagnitudes {
            time == start ? startLevels : time == end ? endLevels : levels(at: time)
        }

        /// The same segment `offset` seconds later.
        func moved(by offset: Double) -> Segment {
            Segment(start: start + offset, end: end + offset, startLevels: startLevels, endLevels: endLevels)
        }
    }

    /// Contiguous segments covering `0..<endTime`, in time order.
    public private(set) var segments: [Segment]

    /// After this instant the output is off for good (seconds from the timeline's start).
    public var endTime: Double { segments.last?.end ?? 0 }

    /// A timeline from time-ordered segments: a gap (before the first one, or between two) is silence, a
    /// segment starting before the previous one ends is cut to start there, empty ones are dropped, and adjacent
    /// collinear segments merge.
    public init(segments: [Segment]) {
        self.segments = []
        for var segment in segments {
            let previousEnd = self.segments.last?.end ?? 0
            if segment.start < previousEnd {
                guard segment.end > previousEnd else { continue }
                segment = Segment(
                    start: previousEnd, end: segment.end, startLevels: segment.levels(at: previousEnd),
                    endLevels: segment.endLevels)
            }
            guard segment.end > segment.start else { continue }
            if segment.start > previousEnd {
                append(Segment(start: previousEnd, end: segment.start, startLevels: .off, endLevels: .off))
            }
            append(segment)
        }
        trimTrailingSilence()
    }

    /// The silent timeline.
    public static let silent = MotorTimeline(segments: [])

    private mutating func append(_ segment: Segment) {
        if let last = segments.last, last.endLevels == segment.startLevels, Self.collinear(last, segment) {
            segments[segments.count - 1].end = segment.end
            segments[segments.count - 1].endLevels = segment.endLevels
        } else {
            segments.append(segment)
        }
    }

    /// Whether `next` continues `previous` on the same line (slopes equal within rounding noise).
    private static func collinear(_ previous: Segment, _ next: Segment) -> Bool {
        let tolerance = 1e-12
        let spanA = previous.end - previous.start
        let spanB = next.end - next.start
        guard spanA > 0, spanB > 0 else { return false }
        let slope = { (a: Double, b: Double, span: Double) in (b - a) / span }
        return abs(
            slope(previous.startLevels.strong, previous.endLevels.strong, spanA)
                - slope(next.startLevels.strong, next.endLevels.strong, spanB)) * Swift.max(spanA, spanB) <= tolerance
            && abs(
                slope(previous.startLevels.weak, previous.endLevels.weak, spanA)
                    - slope(next.startLevels.weak, next.endLevels.weak, spanB)) * Swift.max(spanA, spanB) <= tolerance
    }

    private mutating func trimTrailingSilence() {
        while let last = segments.last, last.startLevels.isOff, last.endLevels.isOff { segments.removeLast() }
    }

    /// The index of the segment holding `time` (the later one at a boundary), `nil` outside `0..<endTime`.
    public func segmentIndex(at time: Double) -> Int? {
        guard let first = segments.first, time >= first.start, time < endTime else { return nil }
        var low = 0
        var high = segments.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if segments[middle].start <= time { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// The levels at `time`; at a jump, the value after it. Off before 0 and from `endTime` on.
    public func levels(at time: Double) -> MotorMagnitudes {
        guard let index = segmentIndex(at: time) else { return .off }
        return segments[index].levels(at: time)
    }

    /// The levels just before `time`: at a jump, the value before it. Off at or before the first segment's start
    /// and after `endTime`; at `endTime`, the last segment's end levels.
    public func levels(justBefore time: Double) -> MotorMagnitudes {
        guard let first = segments.first, time > first.start, time <= endTime else { return .off }
        var index = segmentIndex(at: time) ?? segments.count - 1
        if segments[index].start >= time { index -= 1 }
        return segments[index].levels(at: time)
    }

    /// The mean levels over `from..<to` (silence outside `0..<endTime`); off for an empty or inverted span.
    public func mean(from: Double, to: Double) -> MotorMagnitudes {
        guard to > from, to.isFinite, from.isFinite, var index = segmentIndex(at: Swift.max(from, 0)) else {
            return .off
        }
        var strong = 0.0
        var weak = 0.0
        while index < segments.count, segments[index].start < to {
            let segment = segments[index]
            let start = Swift.max(segment.start, from)
            let end = Swift.min(segment.end, to)
            if end > start {
                // Linear inside the segment: its mean there is the level at the middle.
                let middle = segment.levels(at: (start + end) / 2)
                strong += middle.strong * (end - start)
                weak += middle.weak * (end - start)
            }
            index += 1
        }
        return MotorMagnitudes(strong: strong / (to - from), weak: weak / (to - from))
    }

    /// Every instant where the output jumps or changes slope, plus the end.
    public var breakpoints: [Double] {
        segments.map(\.start) + (segments.isEmpty ? [] : [endTime])
    }

    // MARK: Time operations

    /// Played at `rate` times the speed (Core Haptics' `playbackRate`): every time divided by `rate`.
    public func scaled(rate: Double) -> MotorTimeline {
        guard rate > 0, rate != 1 else { return self }
        return MotorTimeline(
            segments: segments.map {
                Segment(
                    start: $0.start / rate, end: $0.end / rate, startLevels: $0.startLevels, endLevels: $0.endLevels)
            })
    }

    /// Every time moved by `offset` seconds; the part before 0 after the move is dropped (and a positive
    /// offset starts with silence).
    public func shifted(by offset: Double) -> MotorTimeline {
        if offset < 0 { return slice(from: -offset) }
        // The initialiser fills the gap before the first segment with silence.
        return MotorTimeline(segments: segments.map { $0.moved(by: offset) })
    }

    /// The part in `start..<end`, moved so that `start` becomes 0 (seek: `slice(from: offset)`).
    public func slice(from start: Double, to end: Double = .infinity) -> MotorTimeline {
        let start = Swift.max(start, 0)
        var result: [Segment] = []
        for segment in segments where segment.end > start && segment.start < end {
            let from = Swift.max(segment.start, start)
            let to = Swift.min(segment.end, end)
            result.append(
                Segment(
                    start: from - start, end: to - start, startLevels: segment.levels(at: from),
                    endLevels: segment.levels(at: to)))
        }
        return MotorTimeline(segments: result)
    }

    /// Core Haptics' looping: each of the first `repeatCount - 1` passes plays `0..<loopEnd` and the next pass
    /// starts at `loopEnd`; the last pass plays to the end (with its release). A `loopEnd` of 0 or less means
    /// the whole timeline; an infinite one (or an endless timeline's whole) is never left, the timeline itself.
    /// For endless loops, call with a count covering the time ahead and extend later. The passes are at most as
    /// many as `maximumLoopedSegments` segments of passes hold (the loop then ends sooner, with its
    /// release): a count of `Int.max` asked for more segments than memory holds.
    public func looped(loopEnd: Double, repeatCount: Int) -> MotorTimeline {
        guard repeatCount > 1 else { return self }
        let period = loopEnd > 0 ? loopEnd : endTime
        guard period > 0, period.isFinite else { return self }
        let pass = slice(from: 0, to: period).padded(to: period)
        let fitting = Swift.max(Self.maximumLoopedSegments - segments.count, 0) / Swift.max(pass.segments.count, 1) + 1
        let repeatCount = Swift.min(repeatCount, fitting)
        guard repeatCount > 1 else { return self }
        var result: [Segment] = []
        for index in 0..<(repeatCount - 1) {
            let offset = Double(index) * period
            result += pass.segments.map { $0.moved(by: offset) }
        }
        result += segments.map { $0.moved(by: Double(repeatCount - 1) * period) }
        return MotorTimeline(segments: result)
    }

    /// The most segments of passes `looped(loopEnd:repeatCount:)` builds: 2^20, 48 MB of them.
    public static let maximumLoopedSegments = 1 << 20

    /// Extended with silence up to `length` (so that a loop pass has its full period even when silent at the end).
    func padded(to length: Double) -> MotorTimeline {
        var copy = self
        let end = copy.endTime
        if length > end {
            copy.segments.append(Segment(start: end, end: length, startLevels: .off, endLevels: .off))
        }
        return copy
    }

    // MARK: Mixing

    /// Several timelines on one device: summed per motor and clamped to 1 (the rule for overlapping events,
    /// and the way ff-memless combines started effects). Clamping adds a breakpoint where a sum crosses 1.
    /// The sums are made pairwise, in a balanced tree over the timelines in their order (`summedPieces`): the
    /// work grows with the breakpoints times the depth of the tree, not with the breakpoints times the
    /// timelines, as summing every timeline at every breakpoint of the mix did (200 overlapping players of
    /// a one-second pattern cost an engine 100 ms a plan in a debug build). One timeline is its own mix when
    /// every level of it lies within 0...1, and is clamped by the same rule otherwise (a timeline built by hand
    /// may ramp past full).
    public static func mixed(_ timelines: [MotorTimeline]) -> MotorTimeline {
        let active = timelines.filter { !$0.segments.isEmpty }
        if active.count == 1, active[0].isWithinFullScale { return active[0] }
        var result: [Segment] = []
        for piece in summedPieces(active.map(\.segments)) {
            result += clampedPieces(from: piece.start, to: piece.end, start: piece.startLevels, end: piece.endLevels)
        }
        return MotorTimeline(segments: result)
    }

    /// Whether every segment's levels, at both its ends and so all along it, lie within 0...1 (NaN does not).
    var isWithinFullScale: Bool {
        let within = { (levels: MotorMagnitudes) in (0...1).contains(levels.strong) && (0...1).contains(levels.weak) }
        return segments.allSatisfy { within($0.startLevels) && within($0.endLevels) }
    }

    /// Time-ordered, non-overlapping lists of linear pieces summed per motor, unclamped: a piece wherever any
    /// list has one, cut at every list's breakpoints, a gap where none has. Summed two lists at a time, level by
    /// level, so that each piece of the result is added up along the tree's depth only.
    static func summedPieces(_ lists: [[Segment]]) -> [Segment] {
        var level = lists
        while level.count > 1 {
            var next: [[Segment]] = []
            next.reserveCapacity((level.count + 1) / 2)
            var index = 0
            while index + 1 < level.count {
                next.append(summed(level[index], level[index + 1]))
                index += 2
            }
            if index < level.count { next.append(level[index]) }
            level = next
        }
        return level.first ?? []
    }

    /// Two time-ordered, non-overlapping piece lists summed in one sweep. A piece's own end points keep their
    /// levels exactly; a cut inside a piece takes the level on its line there.
    private static func summed(_ a: [Segment], _ b: [Segment]) -> [Segment] {
        var result: [Segment] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        var time = -Double.infinity
        while true {
            while i < a.count, a[i].end <= time { i += 1 }
            while j < b.count, b[j].end <= time { j += 1 }
            let aNext = i < a.count ? a[i].start : .infinity
            let bNext = j < b.count ? b[j].start : .infinity
            // A list sounds only while it has a piece left: once an endless piece has been summed, `time` is
            // infinite, and "no piece left" (an infinite next start) is no later than it.
            let aSounds = i < a.count && aNext <= time
            let bSounds = j < b.count && bNext <= time
            guard aSounds || bSounds else {
                // A gap in both: on to the next piece of either.
                let next = Swift.min(aNext, bNext)
                guard next < .infinity else { break }
                time = next
                continue
            }
            let end = Swift.min(aSounds ? a[i].end : aNext, bSounds ? b[j].end : bNext)
            var startLevels = MotorMagnitudes.off
            var endLevels = MotorMagnitudes.off
            if aSounds {
                startLevels = startLevels + a[i].exactLevels(at: time)
                endLevels = endLevels + a[i].exactLevels(at: end)
            }
            if bSounds {
                startLevels = startLevels + b[j].exactLevels(at: time)
                endLevels = endLevels + b[j].exactLevels(at: end)
            }
            result.append(Segment(start: time, end: end, startLevels: startLevels, endLevels: endLevels))
            time = end
        }
        return result
    }

    /// A linear piece clamped to 0...1 per motor, split where either motor crosses a bound. Its own end points
    /// keep their levels (an endless piece's line has no value at infinity: `levels(at:)` is NaN there).
    package static func clampedPieces(from: Double, to: Double, start: MotorMagnitudes, end: MotorMagnitudes)
        -> [Segment]
    {
        var cuts = [from, to]
        for (a, b) in [(start.strong, end.strong), (start.weak, end.weak)] {
            for bound in [0.0, 1.0] where (a - bound) * (b - bound) < 0 {
                cuts.append(from + (to - from) * (bound - a) / (b - a))
            }
        }
        cuts.sort()
        let raw = Segment(start: from, end: to, startLevels: start, endLevels: end)
        var pieces: [Segment] = []
        for (a, b) in zip(cuts, cuts.dropFirst()) where b > a {
            pieces.append(
                Segment(
                    start: a, end: b, startLevels: raw.exactLevels(at: a).clamped(),
                    endLevels: raw.exactLevels(at: b).clamped()))
        }
        return pieces
    }

    // MARK: Sampling

    /// The most samples `samples(rate:)` gives: 2^20, over 17 minutes at 1 kHz, 24 MB of samples.
    public static let maximumSampleCount = 1 << 20

    /// The levels every `1 / rate` seconds from 0 through `endTime` (inclusive of the first silent sample), at most
    /// `maximumSampleCount` of them: where more would be needed (a timeline built by hand that lasts for ages, or
    /// an enormous rate), the first `maximumSampleCount`. None for a rate that is not a positive finite number.
    public func samples(rate: Double) -> [(time: Double, levels: MotorMagnitudes)] {
        guard rate > 0, rate.isFinite else { return [] }
        // Counted in `Double` first: the product may be infinite or far beyond `Int`.
        let needed = (endTime * rate).rounded(.up) + 1
        let count = needed < Double(Self.maximumSampleCount) ? Int(needed) : Self.maximumSampleCount
        return (0..<count).map { index in
            let time = Double(index) / rate
            return (time, levels(at: time))
        }
    }
}
