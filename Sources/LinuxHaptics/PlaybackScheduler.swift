// The players of one engine, advanced together: due commands applied, the next engine time a player's state
// changes, and a revision that says when the mix (PlaybackPlan.swift) must be planned again. Pure (no clock,
// no I/O), so it is unit-tested with plain numbers (PlaybackSchedulerTests).
import HapticRendering

struct PlaybackScheduler: Sendable {
    var players: [PlayerID: PlayerState] = [:]
    /// Players started through a prepared pulse on its own slot, with the pattern time the pulse covers: the
    /// device plays that part, the mix leaves it out and takes over after it (a transient's decay, say).
    var preparedPlayers: [PlayerID: Double] = [:]
    private var nextID = PlayerID.first
    /// Bumped whenever the mix may have changed (a player command applied, an API call on a player): the
    /// engine's plan made for an older revision is stale.
    private(set) var revision = MixRevision()
    /// The earliest engine time a change since the last plan took effect at: the next plan starts there (a
    /// start queued at t and applied a little later still plans from t, as the planner would).
    private(set) var changedSince: Double?

    struct Step: Sendable {
        /// Engine time of the next state change (a queued command, a natural end); nil when none is due.
        var nextChange: Double?
        var events: [(player: PlayerID, event: PlayerEvent)]
        var isActive: Bool
    }

    mutating func add(_ state: PlayerState) -> PlayerID {
        defer { nextID = nextID.next }
        players[nextID] = state
        return nextID
    }

    var isActive: Bool { players.values.contains { $0.isActive } }

    /// Runs `body` on player `id` where it lies in the dictionary; nil when there is no such player. A
    /// `PlayerState` holds many buffers, and in the peers bench `players[id]?.schedule(...)` made a start about
    /// 50 µs slower under emulation than changing the value through its index, as this does.
    mutating func withPlayer<T>(_ id: PlayerID, _ body: (inout PlayerState) -> T) -> T? {
        guard let index = players.index(forKey: id) else { return nil }
        return body(&players.values[index])
    }

    /// Says the mix may have changed from engine time `time` on.
    mutating func invalidate(at time: Double) {
        revision.advance()
        changedSince = min(changedSince ?? time, time)
    }

    /// A plan is being made from the changes so far.
    mutating func consumeChanges() -> Double? {
        defer { changedSince = nil }
        return changedSince
    }

    /// Applies everything due at `now` and returns what happened and the next state change. Each player is
    /// advanced in place (`withPlayer`); one with no state change ahead (nothing queued, no end coming) has
    /// nothing to apply and is left alone.
    mutating func advance(to now: Double) -> Step {
        /// One player's advance: its first state change before it, whether its queue or phase changed, what
        /// happened, and its next state change after it.
        struct Advanced {
            var firstQueued: Double
            var changed: Bool
            var happened: [PlayerEvent]
            var nextChange: Double?
        }
        var events: [(PlayerID, PlayerEvent)] = []
        var next: Double?
        for id in players.keys.sorted() {
            let advanced = withPlayer(id) { player -> Advanced? in
                guard let firstQueued = player.nextStateChange else { return nil }
                let queued = player.queuedCount
                let happened = player.advance(to: now)
                return Advanced(
                    firstQueued: firstQueued, changed: player.queuedCount != queued || !happened.isEmpty,
                    happened: happened, nextChange: player.nextStateChange)
            }
            guard let outcome = advanced ?? nil else { continue }
            for event in outcome.happened { events.append((id, event)) }
            if outcome.changed { invalidate(at: outcome.firstQueued) }
            if let change = outcome.nextChange { next = min(next ?? change, change) }
        }
        return Step(nextChange: next, events: events, isActive: isActive)
    }

    /// Drops released players that have nothing left to play; returns their ids.
    mutating func removeFinishedOrphans() -> [PlayerID] {
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
        revision.advance()
    }

    /// Stops every player at once (the engine stopped or lost its device); no events.
    mutating func haltAll() {
        for id in Array(players.keys) { withPlayer(id) { $0.halt() } }
        changedSince = nil
        revision.advance()
    }
}
