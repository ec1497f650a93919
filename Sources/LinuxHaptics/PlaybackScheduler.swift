// The players of one engine, advanced together: due commands applied, the mix at "now", and the next engine
// time anything changes. Pure (no clock, no I/O), so it is unit-tested with plain numbers.
import HapticRendering

struct PlaybackScheduler: Sendable {
    /// The mix is re-sampled this often along a ramp (a linear segment or an intensity curve): 50 updates a
    /// second, the most that rumble firmware takes reliably (BRIEF §5) and 2.5x finer than ff-memless' 50 ms
    /// envelope steps. Steps (breakpoints) are sent at their exact time regardless.
    static let defaultRampStep = 0.02

    var players: [Int: PlayerState] = [:]
    /// Players started through a prepared pulse on its own slot, with the pattern time the pulse covers: the
    /// device plays that part, the mix leaves it out and takes over after it (a transient's decay, say).
    var preparedPlayers: [Int: Double] = [:]
    var rampStep = defaultRampStep
    private var nextID = 0

    struct Step: Sendable {
        var mix: MotorMagnitudes
        /// Engine time of the next change point; nil when nothing is scheduled.
        var nextChange: Double?
        var events: [(player: Int, event: PlayerEvent)]
        var isActive: Bool
    }

    mutating func add(_ state: PlayerState) -> Int {
        defer { nextID += 1 }
        players[nextID] = state
        return nextID
    }

    var isActive: Bool { players.values.contains { $0.isActive } }

    /// Applies everything due at `now` and returns the mix and the next change point.
    mutating func advance(to now: Double) -> Step {
        var events: [(Int, PlayerEvent)] = []
        var parts: [MotorMagnitudes] = []
        var next: Double?
        for id in players.keys.sorted() {
            guard var player = players[id] else { continue }
            events += player.advance(to: now).map { (id, $0) }
            players[id] = player
            let coveredByPulse = preparedPlayers[id].map { player.offset(at: now) + PlayerState.epsilon < $0 } ?? false
            if !coveredByPulse { parts.append(player.levels(at: now)) }
            if let change = player.nextChange(after: now) {
                let wake = change.ramping ? min(change.time, now + rampStep) : change.time
                next = min(next ?? wake, wake)
            }
        }
        return Step(mix: MotorMagnitudes.summed(parts), nextChange: next, events: events, isActive: isActive)
    }

    /// Drops released players that have nothing left to play; returns their ids.
    mutating func removeFinishedOrphans() -> [Int] {
        let done = players.filter { $0.value.isOrphaned && !$0.value.isActive }.map(\.key)
        for id in done {
            players[id] = nil
            preparedPlayers[id] = nil
        }
        return done
    }

    /// Stops every player at once (the engine stopped or lost its device); no events.
    mutating func haltAll() {
        for id in players.keys { players[id]?.halt() }
    }
}
