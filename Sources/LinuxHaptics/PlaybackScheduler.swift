// The players of one engine, advanced together: due commands applied, the next engine time a player's state
// changes, and a revision that says when the mix (PlaybackPlan.swift) must be planned again. Pure (no clock,
// no I/O), so it is unit-tested with plain numbers.
import HapticRendering

struct PlaybackScheduler: Sendable {
    var players: [Int: PlayerState] = [:]
    /// Players started through a prepared pulse on its own slot, with the pattern time the pulse covers: the
    /// device plays that part, the mix leaves it out and takes over after it (a transient's decay, say).
    var preparedPlayers: [Int: Double] = [:]
    private var nextID = 0
    /// Bumped whenever the mix may have changed (a player command applied, an API call on a player): the
    /// engine's plan made for an older revision is stale.
    private(set) var revision = 0
    /// The earliest engine time a change since the last plan took effect at: the next plan starts there (a
    /// start queued at t and applied a little later still plans from t, as the planner would).
    private(set) var changedSince: Double?

    struct Step: Sendable {
        /// Engine time of the next state change (a queued command, a natural end); nil when none is due.
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

    /// Says the mix may have changed from engine time `time` on.
    mutating func invalidate(at time: Double) {
        revision &+= 1
        changedSince = min(changedSince ?? time, time)
    }

    /// A plan is being made from the changes so far.
    mutating func consumeChanges() -> Double? {
        defer { changedSince = nil }
        return changedSince
    }

    /// Applies everything due at `now` and returns what happened and the next state change. Each player is
    /// advanced in place (a copy taken out of the dictionary would copy its queue on the first change); one
    /// with no state change ahead (nothing queued, no end coming) has nothing to apply and is left alone.
    mutating func advance(to now: Double) -> Step {
        var events: [(Int, PlayerEvent)] = []
        var next: Double?
        for id in players.keys.sorted() {
            guard let firstQueued = players[id]?.nextStateChange, let queued = players[id]?.pendingCount else {
                continue
            }
            let happened = players[id]?.advance(to: now) ?? []
            for event in happened { events.append((id, event)) }
            if players[id]?.pendingCount != queued || !happened.isEmpty { invalidate(at: firstQueued) }
            if let change = players[id]?.nextStateChange { next = min(next ?? change, change) }
        }
        return Step(nextChange: next, events: events, isActive: isActive)
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

    /// Forgets every player (the output was reset). Ids keep counting: a handle from before the reset never names
    /// a player made after it, so letting it go or setting its completion handler cannot touch one.
    mutating func forgetPlayers() {
        players = [:]
        preparedPlayers = [:]
        changedSince = nil
        revision &+= 1
    }

    /// Stops every player at once (the engine stopped or lost its device); no events.
    mutating func haltAll() {
        for id in players.keys { players[id]?.halt() }
        changedSince = nil
        revision &+= 1
    }
}
