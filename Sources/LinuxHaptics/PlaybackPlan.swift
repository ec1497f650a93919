// What the playback thread sends: the renderer's DeviceCommandPlanner run on the mix of every playing player,
// in engine time from the instant the mix last changed. Pure: no clock, no I/O.
import HapticRendering

/// The device commands planned for the current mix, in engine time.
struct PlaybackPlan: Sendable {
    /// Mixes looping players only this far ahead (seconds); the plan is made again there. Long enough that
    /// re-planning costs nothing measurable, short enough to bound the mixed timeline of a tiny loop.
    static let loopHorizonSeconds = 2.0
    /// Extra mixed timeline past a horizon, in minimum update intervals: the planner looks up to two intervals
    /// ahead of a command (a jump within one, then its hold), so commands before the horizon are decided on
    /// the real mix, not on a cut-off end.
    static let lookaheadIntervals = 3.0
    /// Extra mixed timeline past a horizon, at least: the level of a hold is the mean over the stretch it is
    /// likely to last, which on a gentle ramp runs past a few intervals.
    static let lookaheadSeconds = 0.25
    /// The shortest loop, in engine time, mixed pass by pass: one that comes round faster (a short loop at a high
    /// playback rate) is mixed as its mean over a pass, held (`PlaybackScheduler.steadyLevels(of:)`). No rumble device takes
    /// two updates closer than 4 ms (the virtual pad's kernel tick), so the planner could only hold such a loop at
    /// its mean anyway, and mixing its passes one by one costs work and memory per pass: at a rate of 100,000, a
    /// one-second loop came round 225,000 times in one plan.
    static let shortestMixedLoop = 0.001
    /// And so is a loop whose passes bring more breakpoints a second than this (two per segment of its timeline):
    /// one every 10 µs, far finer than any device follows. A pattern made in code of 2,000 sub-microsecond events
    /// looping within a millisecond was mixed pass by pass, 1.45 GB and 15 s for one plan, until 6 December.
    static let mostMixedBreakpointsPerSecond = 100_000.0

    /// The scheduler revision it was made for: a later change to any player makes it stale.
    var revision: MixRevision
    /// In seconds from `origin`: a player's solo plan becomes the engine's as it is, with no copy.
    var commands: [RumbleCommand]
    /// The engine time the commands count from.
    var origin: Double
    /// Index of the next command to send.
    var next = 0
    /// Engine time at which the plan must be made again (looping players; a long mix, at its last command), nil
    /// when it covers every player to its end. It is made again there once every command up to it is written.
    var horizon: Double?
    /// What the device holds after the last command before the horizon (a long mix's: the horizon's own) as the
    /// plan counts it, each command at its time, in seconds from `origin`; nil without a horizon. The plan made at
    /// the horizon resumes from it, so that it is the rest of the plan made whole however late the thread wrote
    /// those commands, as within a plan; the device's own count still holds a command back until it takes it.
    var horizonHolds: DeviceCommandPlanner.Resumption?

    /// `horizonHolds` in engine time.
    var holdsAtHorizon: DeviceCommandPlanner.Resumption? {
        guard var holds = horizonHolds else { return nil }
        holds.lastCommandTime += origin
        holds.lastWriteTime += origin
        return holds
    }

    /// The horizon once every command up to it is taken (a long mix's plan ends with a command at its horizon,
    /// from which the next plan resumes); nil before, and when the plan has none.
    var horizonReached: Double? {
        guard let horizon else { return nil }
        return nextCommandTime.map { $0 > horizon + PlayerState.epsilon } ?? true ? horizon : nil
    }

    /// The next command's engine time, nil when none is left.
    var nextCommandTime: Double? { next < commands.count ? origin + commands[next].time : nil }
    /// The next command, its time counted from `origin`; nil when none is left.
    var nextCommand: RumbleCommand? { next < commands.count ? commands[next] : nil }

    /// What a pass takes from the plan at once.
    struct Due {
        /// The latest command due: the level that holds now (its time in engine time); nil when none was due.
        var latest: RumbleCommand?
        /// The loudest (`MotorMagnitudes.peak`) of the other commands due, all of whose holds the thread slept
        /// through, its time in engine time; nil when none was.
        var loudestSkipped: RumbleCommand?
    }

    /// Consumes every command due at `now`. When the thread woke late past several, only the latest is
    /// sent as planned (two writes would break the rate limit); the loudest of the others is handed back too,
    /// for the pass to write late rather than never when the device would not otherwise play it
    /// (`MotorMagnitudes.wasMissed`).
    mutating func takeDue(at now: Double) -> Due {
        takeCommands { time, _ in time <= now + PlayerState.epsilon }
    }

    /// Consumes every command due at `now`, and after them those due by `end` that set the motors to a non-zero
    /// level, up to the first that stops them: the commands a pass writes early, within the lead of an update
    /// alone (`MotorOutput.changeLead`). A stop lands at once and has no lead: it stays in the plan until its time.
    mutating func takeDue(at now: Double, updatesUntil end: Double) -> Due {
        takeCommands { time, levels in
            time <= now + PlayerState.epsilon || (time <= end + PlayerState.epsilon && !levels.isOff)
        }
    }

    /// Consumes every command before `time`, which a plan made from `time` replaces: none of them was sent,
    /// so the loudest is handed back as skipped.
    mutating func takeAll(before time: Double) -> RumbleCommand? {
        let due = takeCommands { commandTime, _ in commandTime < time - PlayerState.epsilon }
        guard let latest = due.latest else { return nil }
        guard let skipped = due.loudestSkipped, skipped.levels.peak >= latest.levels.peak else { return latest }
        return skipped
    }

    private mutating func takeCommands(dueBy isDue: (_ time: Double, _ levels: MotorMagnitudes) -> Bool) -> Due {
        var latest: Int?
        var loudest: Int?
        while next < commands.count, isDue(origin + commands[next].time, commands[next].levels) {
            if let latest, commands[latest].levels.peak > loudest.map({ commands[$0].levels.peak }) ?? -1 {
                loudest = latest
            }
            latest = next
            next += 1
        }
        return Due(latest: latest.map(inEngineTime), loudestSkipped: loudest.map(inEngineTime))
    }

    private func inEngineTime(_ index: Int) -> RumbleCommand {
        let command = commands[index]
        return RumbleCommand(time: origin + command.time, levels: command.levels, holdDuration: command.holdDuration)
    }
}

extension MotorMagnitudes {
    /// Whether a level the thread slept through (`PlaybackPlan.Due.loudestSkipped`) would go unfelt: it is
    /// stronger on either motor than both what the device `held` before and what it is `sent` now.
    func wasMissed(held: MotorMagnitudes, sent: MotorMagnitudes) -> Bool {
        strong > Swift.max(held.strong, sent.strong) || weak > Swift.max(held.weak, sent.weak)
    }
}

extension PlaybackScheduler {
    /// Plans the device commands for every playing player from engine time `origin` on, for a device holding
    /// `resumption` (its times in engine time). A mix that loops is planned to a horizon and planned again there.
    /// One that does not, and lasts longer than that horizon, is planned up to its first command at or past it,
    /// and planned again from that command once it is written: those commands are the whole plan's, and the plan
    /// made from one of its commands is the rest of it, so what is sent is the same. A long pattern (70 s of
    /// `long_clip.ahap`: about 180 ms to plan whole in a debug build) then no longer holds up the pass that plans
    /// it, a start beside it, or the making of its player (`soloPlan`), for that long. `continuing`: no player
    /// changed at `origin` (a horizon), so a step there is a jump only where the mix jumps (the planner's
    /// `levelsBefore`).
    func plan(
        from origin: Double, resuming resumption: DeviceCommandPlanner.Resumption, planner: DeviceCommandPlanner,
        locality: HapticLocality, continuing: Bool = false
    ) -> PlaybackPlan {
        let loops = players.values.contains { $0.playsAfter(origin) && $0.loopLength != nil }
        let stretch = Self.planHorizon(planner)
        let span =
            loops
            ? stretch
                + max(
                    PlaybackPlan.lookaheadIntervals * planner.profile.minimumUpdateInterval,
                    PlaybackPlan.lookaheadSeconds)
            : playingEnd(from: origin)
        let timeline = mixedTimeline(from: origin, span: span, locality: locality)
        var lastCommand = resumption.lastCommandTime - origin
        let interval = planner.profile.minimumUpdateInterval
        // A plan made exactly when the rate limit lets the next command out (a player starting on a ramp's
        // 20 ms step) must see "allowed from 0", not a rounding residue of engine times a hair after it.
        if abs(lastCommand + interval) < PlayerState.epsilon { lastCommand = -interval }
        // The budget's last write is the command (rounded as above) unless a renewal made late came after it.
        let lastWrite =
            resumption.lastWriteTime == resumption.lastCommandTime ? lastCommand : resumption.lastWriteTime - origin
        let local = DeviceCommandPlanner.Resumption(
            sent: resumption.sent, lastCommandTime: lastCommand, writesLeft: resumption.writesLeft,
            lastWriteTime: lastWrite)
        // The timeline is planned from `origin` as 0: so are the device's frames.
        var planner = planner
        if let frames = planner.frames {
            planner.frames = FrameGrid(origin: frames.origin - origin, period: frames.period)
        }
        var commands = planner.commands(
            for: timeline, from: 0, resuming: local,
            levelsBefore: continuing ? mixedLevels(justBefore: origin, locality: locality) : nil,
            until: loops ? .infinity : stretch)
        var horizon: Double?
        if loops {
            commands.removeAll { $0.time >= stretch }
            horizon = stretch
        } else if let last = commands.last, last.time >= stretch {
            horizon = last.time
        }
        let holds = horizon.map { _ in commands.reduce(local) { planner.resumption(after: $1, from: $0) } }
        return PlaybackPlan(
            revision: revision, commands: commands, origin: origin, horizon: horizon.map { origin + $0 },
            horizonHolds: holds)
    }

    /// The plan a pass makes the instant `timeline` starts from its top, alone, on a device at rest (off, rate
    /// limit free), its times in seconds from that start; for a long pattern, up to its horizon, as any pass
    /// plans it. Planned when the player is made, outside the engine's lock: a start that meets those conditions
    /// writes the first command at once and takes the plan as the engine's (`EngineState.takeOpening`), so it
    /// plans nothing before its horizon. No command when the timeline sends nothing.
    static func soloPlan(
        of timeline: MotorTimeline, planner: DeviceCommandPlanner, locality: HapticLocality
    ) -> PlaybackPlan {
        var player = PlayerState(timeline: timeline)
        player.schedule(.start, at: 0)
        _ = player.advance(to: 0)
        var solo = PlaybackScheduler()
        _ = solo.add(player)
        return solo.plan(from: 0, resuming: .deviceOff, planner: planner, locality: locality)
    }

    /// On the device's frames, four frames: the grid follows the pad's reports, so each stretch is planned on
    /// the frames as they stand then.
    private static func planHorizon(_ planner: DeviceCommandPlanner) -> Double {
        if let frames = planner.frames { return 4 * frames.period }
        return max(PlaybackPlan.loopHorizonSeconds, 4 * planner.profile.minimumUpdateInterval)
    }

    /// Seconds from `origin` until the last non-looping player playing after it (`PlayerState.playsAfter`) ends.
    private func playingEnd(from origin: Double) -> Double {
        var end = 0.0
        for player in players.values where player.playsAfter(origin) {
            end = max(end, (player.timeline.endTime - player.unwrappedOffset(at: origin)) / player.rate)
        }
        return end
    }

    /// The mix of the players playing just before engine time `origin` (`PlayerState.playsAfter`; the left limit:
    /// at a step, the level before it), by the rule `mixedTimeline` sums by; a player at its top, or in the part a
    /// prepared pulse played, adds nothing. Only meaningful where no player changed at `origin`.
    func mixedLevels(justBefore origin: Double, locality: HapticLocality) -> MotorMagnitudes {
        var sum = MotorMagnitudes.off
        for id in players.keys.sorted() {
            guard let player = players[id], player.playsAfter(origin) else { continue }
            var offset = player.unwrappedOffset(at: origin)
            guard offset > 0 else { continue }
            if let loop = player.loopLength, loop > 0 {
                // In (0, loop]: at a loop's boundary, the end of the pass before it.
                offset -= ((offset / loop).rounded(.up) - 1) * loop
            }
            guard offset > preparedPlayers[id] ?? 0 else { continue }
            if let steady = steadyLevels(of: id) {
                sum = sum + steady
                continue
            }
            sum = sum + player.timeline.levels(justBefore: offset)
        }
        return locality.apply(sum.clamped())
    }

    /// The levels a looping player is mixed at when its loop comes round faster than `shortestMixedLoop` in engine
    /// time, or brings more than `mostMixedBreakpointsPerSecond`: its mean over a pass (what a prepared pulse plays
    /// on its own slot left out); nil for any other player.
    func steadyLevels(of id: PlayerID) -> MotorMagnitudes? {
        guard let player = players[id], let loop = player.loopLength,
            loop / player.rate < PlaybackPlan.shortestMixedLoop
                || Double(2 * player.timeline.segments.count + 2) * player.rate / loop
                    > PlaybackPlan.mostMixedBreakpointsPerSecond
        else { return nil }
        let covered = Swift.min(preparedPlayers[id] ?? 0, loop)
        let mean = player.timeline.mean(from: covered, to: loop)
        return MotorMagnitudes(strong: mean.strong * (loop - covered) / loop, weak: mean.weak * (loop - covered) / loop)
    }

    /// The mix of every player playing after engine time `origin` (`PlayerState.playsAfter`: a player that finished
    /// since counts up to its end) over `0...span` seconds after it, in that local time: each player's part
    /// (`voice`) summed with the others' and clamped per the renderer's rule (`MotorTimeline.mixed`), then routed to
    /// the motors of `locality`. A stretch where no player has a segment stays silent, exactly as in the player's
    /// own timeline, so one player started from its top mixes to its own timeline unchanged when its levels lie
    /// within 0...1 (one built past full is clamped as a sum is). The part of a player a prepared pulse plays on its
    /// own slot is left out.
    func mixedTimeline(from origin: Double, span: Double, locality: HapticLocality) -> MotorTimeline {
        guard span > 0 else { return .silent }
        let voices = players.keys.sorted().compactMap { id -> MotorTimeline? in
            guard let player = players[id], player.playsAfter(origin) else { return nil }
            if let steady = steadyLevels(of: id) {
                return MotorTimeline(segments: [.init(start: 0, end: span, startLevels: steady, endLevels: steady)])
            }
            // A looping player's offset taken within its pass: only the phase counts, and passes are counted from
            // it. From an offset that large (a seek to 1e16 s, then looping on) adding a pass's length to it changed
            // nothing, and counting passes from it never ended (the playback thread spun, until 6 December).
            var startOffset = player.unwrappedOffset(at: origin)
            if let loop = player.loopLength, loop > 0, startOffset >= loop {
                startOffset = startOffset.truncatingRemainder(dividingBy: loop)
            }
            return Self.voice(
                of: player.timeline, from: startOffset, rate: player.rate, loop: player.loopLength,
                covered: preparedPlayers[id] ?? 0, span: span)
        }
        let mix = MotorTimeline.mixed(voices)
        return MotorTimeline(
            segments: mix.segments.map {
                MotorTimeline.Segment(
                    start: $0.start, end: $0.end, startLevels: locality.apply($0.startLevels.clamped()),
                    endLevels: locality.apply($0.endLevels.clamped()))
            })
    }

    /// One player's part of a mix over `0...span` seconds of local time: its `timeline` from pattern time
    /// `startOffset` on at `rate`, pass after pass of `loop` when it loops (each pass `0..<loop` of the timeline),
    /// without the pattern time before `covered` (in every pass). Cut at its own breakpoints only: the mix cuts
    /// it at the others'.
    private static func voice(
        of timeline: MotorTimeline, from startOffset: Double, rate: Double, loop: Double?, covered: Double,
        span: Double
    ) -> MotorTimeline {
        var cuts: [Double] = [0, span]
        var points = timeline.segments.flatMap { [$0.start, $0.end] } + [covered]
        if let loop {
            points = points.filter { $0 < loop } + [loop]
            var base = (startOffset / loop).rounded(.down) * loop
            while (base - startOffset) / rate < span {
                cuts += points.map { (base + $0 - startOffset) / rate }.filter { $0 > 0 && $0 < span }
                base += loop
            }
        } else {
            cuts += points.map { ($0 - startOffset) / rate }.filter { $0 > 0 && $0 < span }
        }
        cuts.sort()
        var pieces: [MotorTimeline.Segment] = []
        var start = cuts[0]
        for end in cuts.dropFirst() where end > start {
            defer { start = end }
            var offset = startOffset + (start + end) / 2 * rate
            var base = 0.0
            if let loop {
                base = (offset / loop).rounded(.down) * loop
                offset -= base
            }
            guard offset >= covered, let segment = timeline.segment(at: offset) else { continue }
            pieces.append(
                MotorTimeline.Segment(
                    start: start, end: end, startLevels: segment.levels(at: startOffset + start * rate - base),
                    endLevels: segment.levels(at: startOffset + end * rate - base)))
        }
        return MotorTimeline(segments: pieces)
    }
}
