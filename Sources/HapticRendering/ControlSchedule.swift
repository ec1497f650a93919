public import AHAP

/// The value of one dynamic control (`HapticIntensityControl`, ...) over pattern time, from the pattern's
/// dynamic parameters and parameter curves plus any sent at run time.
///
/// Rule: the most recently started source wins. A dynamic parameter holds its value from its time on; a curve
/// interpolates linearly between its control points and holds its last value after them. Values clamp to the
/// control's range. Before any source the control has its neutral default.
package struct ControlSchedule: Sendable {
    package enum Source: Sendable {
        case step(value: Double)
        /// Control points in pattern time, sorted by time.
        case curve(points: [(time: Double, value: Double)])
    }

    package let id: HapticDynamicParameter.ID
    /// Sources sorted by start time (once `sort()` has run); at equal times the later one in input order wins.
    private(set) var sources: [(start: Double, source: Source)] = []

    package init(id: HapticDynamicParameter.ID) {
        self.id = id
    }

    package var neutral: Double { id.defaultValue ?? 0 }

    /// Adds a parameter; a time outside `HapticPattern.isWithinTimeBound` (only a pattern built in code or a
    /// far seek can hold one) is skipped, as the renderer skips such events.
    package mutating func add(_ parameter: HapticDynamicParameter) {
        guard HapticPattern.isWithinTimeBound(parameter.relativeTime) else { return }
        sources.append((parameter.relativeTime, .step(value: parameter.clampedValue)))
    }

    /// Adds a curve; one with a point outside the time bound is skipped whole.
    package mutating func add(_ curve: HapticParameterCurve) {
        let range = id.range
        let points = curve.controlPoints
            .map { point -> (time: Double, value: Double) in
                let value = range.map { Swift.min(Swift.max(point.value, $0.lowerBound), $0.upperBound) } ?? point.value
                return (curve.relativeTime + point.relativeTime, value)
            }
            .enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        guard !points.isEmpty, HapticPattern.isWithinTimeBound(curve.relativeTime),
            points.allSatisfy({ HapticPattern.isWithinTimeBound($0.time) })
        else { return }
        sources.append((curve.relativeTime, .curve(points: points)))
    }

    /// Orders the sources by start, keeping input order at equal starts: once, after the last `add`, so that a
    /// pattern of many parameters costs one sort rather than one insertion each.
    package mutating func sort() {
        sources = sources.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }
            .map(\.element)
    }

    package var isEmpty: Bool { sources.isEmpty }

    /// Every time at which the control's value may change slope or jump.
    package var knots: [Double] {
        var times: [Double] = []
        for (start, source) in sources {
            times.append(start)
            if case .curve(let points) = source { times += points.map(\.time).filter { $0 > start } }
        }
        return times
    }

    /// The end of the stretch from `time` on over which `value(at:piece:)` gives the very same value (for every `t`
    /// with `time <= t < end`, `value(at: t, piece: t) == value(at: time, piece: time)`): the next source's start,
    /// or a curve's first point while before it; infinity when nothing follows. Nil when `time` is within a curve's
    /// points, where the value moves.
    package func steadyUntil(_ time: Double) -> Double? {
        let started = sources.partitionPoint { $0.start > time }
        let next = started < sources.count ? sources[started].start : .infinity
        guard started > 0 else { return next }
        switch sources[started - 1].source {
        case .step:
            return next
        case .curve(let points):
            guard let first = points.first, let last = points.last else { return next }
            if time < first.time { return Swift.min(first.time, next) }
            return time >= last.time ? next : nil
        }
    }

    /// The value at `time`, using the linear piece that contains `piece` (a time strictly inside the segment
    /// being evaluated, so that the value at a segment's ends is the limit from inside it).
    package func value(at time: Double, piece: Double) -> Double {
        let started = sources.partitionPoint { $0.start > piece }
        guard started > 0 else { return neutral }
        switch sources[started - 1].source {
        case .step(let value):
            return value
        case .curve(let points):
            guard let first = points.first, let last = points.last else { return neutral }
            if piece < first.time { return first.value }
            if piece >= last.time { return last.value }
            // The first point after `piece` and the one before it (first.time <= piece < last.time here).
            let later = points.partitionPoint { $0.time > piece }
            let earlier = points[later - 1]
            let span = points[later].time - earlier.time
            guard span > 0 else { return points[later].value }
            return earlier.value + (points[later].value - earlier.value) * (time - earlier.time) / span
        }
    }
}

extension RandomAccessCollection {
    /// The index of the first element for which `isAfter` holds, in a collection where it holds from some
    /// element on (times in ascending order, say); `endIndex` when none. A binary search, so that a control
    /// with thousands of sources or points costs a logarithm per look-up.
    func partitionPoint(where isAfter: (Element) -> Bool) -> Index {
        var low = startIndex
        var remaining = count
        while remaining > 0 {
            let half = remaining / 2
            let middle = index(low, offsetBy: half)
            if isAfter(self[middle]) {
                remaining = half
            } else {
                low = index(after: middle)
                remaining -= half + 1
            }
        }
        return low
    }
}

/// The controls acting on a pattern, one schedule per haptic control identifier.
struct ControlSet: Sendable {
    var intensity = ControlSchedule(id: .hapticIntensityControl)
    var sharpness = ControlSchedule(id: .hapticSharpnessControl)
    var attack = ControlSchedule(id: .hapticAttackTimeControl)
    var decay = ControlSchedule(id: .hapticDecayTimeControl)
    var release = ControlSchedule(id: .hapticReleaseTimeControl)

    init(parameters: [HapticDynamicParameter], curves: [HapticParameterCurve]) {
        for parameter in parameters { withSchedule(for: parameter.parameterID) { $0.add(parameter) } }
        for curve in curves { withSchedule(for: curve.parameterID) { $0.add(curve) } }
        intensity.sort()
        sharpness.sort()
        attack.sort()
        decay.sort()
        release.sort()
    }

    /// Audio and unknown controls do not touch the motors and are ignored.
    private mutating func withSchedule(for id: HapticDynamicParameter.ID, _ body: (inout ControlSchedule) -> Void) {
        switch id.canonical {
        case .hapticIntensityControl: body(&intensity)
        case .hapticSharpnessControl: body(&sharpness)
        case .hapticAttackTimeControl: body(&attack)
        case .hapticDecayTimeControl: body(&decay)
        case .hapticReleaseTimeControl: body(&release)
        default: break
        }
    }

    /// Times where intensity or sharpness controls change slope or jump (the timing controls act only at
    /// event boundaries and add no knots of their own).
    var knots: [Double] { intensity.knots + sharpness.knots }
}

/// The value every haptic control has over pattern time, from a pattern's parameters and curves plus runtime
/// controls: what the renderer multiplies or adds. For display and for an engine that reports control state.
public struct PatternControls: Sendable {
    let set: ControlSet

    public init(pattern: HapticPattern, controls runtime: RuntimeControls = .none) {
        set = ControlSet(
            parameters: pattern.dynamicParameters + runtime.parameters,
            curves: pattern.parameterCurves + runtime.curves)
    }

    /// The control's value at `time` (its neutral default for audio and unknown controls).
    public func value(of id: HapticDynamicParameter.ID, at time: Double) -> Double {
        switch id.canonical {
        case .hapticIntensityControl: set.intensity.value(at: time, piece: time)
        case .hapticSharpnessControl: set.sharpness.value(at: time, piece: time)
        case .hapticAttackTimeControl: set.attack.value(at: time, piece: time)
        case .hapticDecayTimeControl: set.decay.value(at: time, piece: time)
        case .hapticReleaseTimeControl: set.release.value(at: time, piece: time)
        default: id.defaultValue ?? 0
        }
    }

    /// An event's sharpness at `time` with the sharpness control added, clamped to 0...1.
    public func sharpness(of event: HapticEvent, at time: Double) -> Double {
        Swift.min(Swift.max(event.sharpness + value(of: .hapticSharpnessControl, at: time), 0), 1)
    }
}
