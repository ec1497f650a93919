/// A piecewise-linear gain 0...1 over pattern time, the shape of one event: corners sorted by time, two corners at
/// one time making a step; 0 before the first corner and from the last on. Haptic voices multiply intensity by it,
/// audio voices volume.
package struct GainEnvelope: Sendable {
    package let corners: [(time: Double, gain: Double)]

    package init(corners: [(time: Double, gain: Double)]) {
        self.corners = corners
    }

    package var start: Double { corners.first?.time ?? 0 }
    package var end: Double { corners.last?.time ?? 0 }

    /// The envelope of an event lasting `duration` seconds from `start`: a linear attack from 0 over `attack`
    /// seconds (a step to 1 when it is 0), then either a hold at 1 to the end (`decay` nil: sustained) or a
    /// linear decay to 0 over `decay` seconds; cut at the end, from where a linear release over `release`
    /// seconds takes the level it had there down to 0.
    package static func continuous(
        start: Double, duration: Double, attack: Double, decay: Double?, release: Double
    ) -> GainEnvelope {
        let end = start + duration
        var shape: [(time: Double, gain: Double)] = [(start, attack > 0 ? 0 : 1), (start + attack, 1)]
        if let decay {
            shape.append((start + attack + decay, 0))
        } else {
            shape.append((Swift.max(end, start + attack), 1))
        }
        var corners = cut(shape, at: end)
        if let last = corners.last?.gain, last > 0, release > 0 { corners.append((end + release, 0)) }
        return GainEnvelope(corners: corners)
    }

    /// `shape` up to `end`: corners after it dropped, the level at `end` interpolated.
    private static func cut(_ shape: [(time: Double, gain: Double)], at end: Double) -> [(time: Double, gain: Double)] {
        var result: [(time: Double, gain: Double)] = []
        for (index, corner) in shape.enumerated() {
            if corner.time <= end {
                result.append(corner)
                continue
            }
            if let previous = result.last, index > 0 {
                let span = corner.time - previous.time
                let gain =
                    span > 0
                    ? previous.gain + (corner.gain - previous.gain) * (end - previous.time) / span : corner.gain
                result.append((end, gain))
            }
            break
        }
        if let last = result.last, last.time < end, last.gain > 0 { result.append((end, last.gain)) }
        return result
    }

    /// The gain at `time`, using the linear piece that contains `piece` (a time strictly inside the segment
    /// being evaluated, so that the value at a segment's ends is the limit from inside it).
    package func gain(at time: Double, piece: Double) -> Double {
        guard let first = corners.first, let last = corners.last, piece >= first.time, piece < last.time else {
            return 0
        }
        for (earlier, later) in zip(corners, corners.dropFirst()) where piece < later.time {
            let span = later.time - earlier.time
            guard span > 0 else { continue }
            return earlier.gain + (later.gain - earlier.gain) * (time - earlier.time) / span
        }
        return 0
    }
}
