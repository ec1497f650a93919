// The device primitive on evdev: one FF_RUMBLE slot per device, updated in place (EVIOCSFF with its id), with a
// silent endless "keeper" effect playing beside it so that a change while it plays is that one update; prepared
// pulses in slots of their own, so a transient starts with one write(). Slots belong to the descriptor: closing it
// (on unplug, stop, idle shutdown) releases them all, in the kernel, at once.
import HapticRendering
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging
import Synchronization

/// A pad's input reports, read as they come (`InputReportReader`), and the frames its driver sends on them.
private final class PadFrames: Sendable {
    let reader: InputReportReader
    private let pacing: Lock<FramePacing>

    /// How long after the report that decides it a frame leaves (`FramePacing.Rules.sendDelay`).
    let sendDelay: Double

    init(reader: InputReportReader, pacing: FramePacing) {
        sendDelay = pacing.rules.sendDelay
        self.reader = reader
        self.pacing = Lock(pacing)
    }

    /// The frames for calls made from `time` on, as the reports read so far and the calls give them; nil once the
    /// pad has sent no report for `staleReports` before `now` (it stopped reporting, and its frames with it).
    func grid(callingFrom time: Double, now: Double) -> FrameGrid? {
        pacing.withLock { pacing in
            for report in reader.reportTimes() { pacing.report(at: report) }
            guard let last = pacing.lastReport, now - last < Self.staleReports else { return nil }
            return pacing.grid(callingFrom: time)
        }
    }

    /// Notes a call to the driver made at `time` (after its write: the reports are read then, so that none is
    /// lost to the node's short queue while a pattern plays; each runs after the calls made before it).
    func called(at time: Double, moves: Bool) {
        pacing.withLock { pacing in
            pacing.called(at: time, moves: moves)
            for report in reader.reportTimes() { pacing.report(at: report) }
        }
    }

    /// The first instant from `time` on that lies `FramePacing.callLead` after a report, as the reports read so far
    /// place them (`FramePacing.callInstant(from:)`): where the engine's own calls fall.
    func callInstant(from time: Double) -> Double? {
        pacing.withLock { pacing in
            for report in reader.reportTimes() { pacing.report(at: report) }
            return pacing.callInstant(from: time)
        }
    }

    /// Reports older than this say nothing of the frames to come.
    static let staleReports = 0.1
}

final class EvdevOutput: MotorOutput {
    private struct MixSlot {
        var effect: UploadedEffect?
        /// The keeper: a rumble at 0 with no replay length, played once, never stopped by us.
        var keeper: UploadedEffect?
        /// Whether a keeper was tried (it is, once per descriptor, whether the device takes it or not).
        var keeperTried = false
        var state = MixSlotState()
    }

    private struct PreparedSlots {
        var slots: [Int: EvdevPulseTrigger] = [:]
        var nextID = 0
    }

    let device: EventDevice
    let capabilities: OutputCapabilities
    /// The device's renewal rhythm, from its render profile.
    let renewal: OutputTiming.Renewal
    private let clock: any HapticClock
    private let logger: Logger
    private let mix = Lock(MixSlot())
    private let prepared = Lock(PreparedSlots())
    /// Counts prepared pulses' uses, for evicting the least recently used one.
    private let uses = PulseUses()
    /// On an Xbox pad over Bluetooth whose report 3 we may write: the way the levels join that report while a
    /// trigger engine of this process writes it (`ReportDiversion`); nil elsewhere.
    private let diversion: ReportDiversion?
    /// On a pad whose driver sends its frames on the pad's input reports, and whose motion node this process may
    /// read (a Switch controller under hid-nintendo): the reports' times, and the frames they give.
    private let reports: PadFrames?

    init(
        device: EventDevice, driver: String?, clock: any HapticClock, logger: Logger, actuatorFallback: String? = nil,
        diversion: ReportDiversion? = nil, followsFrames: Bool
    ) {
        self.device = device
        self.clock = clock
        self.logger = logger
        self.diversion = diversion
        var capabilities = OutputCapabilities(device: device, driver: driver)
        capabilities.actuatorFallback = actuatorFallback
        // A Switch controller: the Pro Controller, or a Joy-Con with its one motor.
        let profile = capabilities.renderProfile
        let onSwitch = profile.withMotors(strong: true, weak: true) == .switchPro
        reports =
            followsFrames && onSwitch
            ? Self.framePacing(
                besideEvent: device.identity.sysPath, overUSB: device.identity.bus == .usb, logger: logger) : nil
        if let reports {
            capabilities.renderProfile = RenderProfile.switchProOnFrames(sendDelay: reports.sendDelay)
                .withMotors(strong: profile.hasStrongMotor, weak: profile.hasWeakMotor)
        }
        self.capabilities = capabilities
        renewal = OutputTiming.Renewal.forProfile(capabilities.renderProfile)
    }

    /// The reports of the pad whose event node is at `sysPath`, when its motion node can be read and its reports
    /// come at a period whose frames are certain (`FramePacing.reportPeriods`), waiting up to `pacingWaitNanoseconds` for
    /// enough of them; nil otherwise (the pad is then planned as any `switch` pad, by its write budget).
    private static func framePacing(besideEvent sysPath: String, overUSB: Bool, logger: Logger) -> PadFrames? {
        guard let node = InputReportReader.motionNode(besideEvent: sysPath) else { return nil }
        guard
            let rules = FramePacing.Rules.forKernel(
                from64: Sys.kernelIsAtLeast(6, 4), tick: Sys.kernelTickSeconds(), overUSB: overUSB)
        else {
            logger.info(
                "this kernel sends a Bluetooth pad's frames 60 ms apart; its rumble is planned without them",
                metadata: ["node": "\(node)"])
            return nil
        }
        let reader: InputReportReader
        do throws(EventDeviceError) {
            reader = try InputReportReader(node: node, logger: logger)
        } catch {
            logger.info(
                "the pad's input reports cannot be read; its rumble is planned without its frames",
                metadata: ["node": "\(node)", "error": "\(error)"])
            return nil
        }
        var pacing = FramePacing(rules: rules)
        let deadline = MonotonicTime.nanoseconds() + pacingWaitNanoseconds
        let now = { Double(MonotonicTime.nanoseconds()) / 1e9 }
        while pacing.grid(callingFrom: now()) == nil, MonotonicTime.nanoseconds() < deadline {
            Sys.sleep(nanoseconds: 5_000_000)
            for time in reader.reportTimes() { pacing.report(at: time) }
        }
        guard let grid = pacing.grid(callingFrom: now()) else {
            logger.info(
                "the pad's input reports give no certain frames; its rumble is planned without them",
                metadata: ["node": "\(node)", "report period": "\(pacing.reportPeriod.map { "\($0)" } ?? "none")"])
            reader.close()
            return nil
        }
        logger.debug(
            "planning on the pad's frames",
            metadata: [
                "node": "\(node)", "frame period": "\(grid.period)",
                "send after the report": "\(pacing.rules.sendDelay)",
            ])
        return PadFrames(reader: reader, pacing: pacing)
    }

    /// The longest wait for the reports when the device is opened: five reports at 15 ms, and room for a pad that
    /// starts reporting late (an emulated one under emulation).
    private static let pacingWaitNanoseconds: UInt64 = 400_000_000

    /// The frames as the reports read so far give them (nil once the pad has sent none for `staleReports`: it
    /// stopped reporting, the frames with it).
    func frameGrid(callingFrom time: Double) -> FrameGrid? { reports?.grid(callingFrom: time, now: clock.now) }

    /// Half the kernel's tick while the keeper plays: a change between two non-zero levels is then an update alone,
    /// which ff-memless hands the driver on its next tick (0 to one tick later), where a play or a stop reaches it
    /// at once. 0 without the keeper, and while a trigger engine's report carries the levels (written at once).
    ///
    /// On a pad whose frames the engine follows, a quarter of a frame: an update alone goes out only while the
    /// driver's worker is busy, where any call between its two sends before a frame is that frame's, and a
    /// quarter of a frame earlier than a play puts the tick's delay (and a late tick under emulation) in the
    /// middle of those 30 ms rather than near their end.
    ///
    /// Only while the change would be an update alone (`MixSlotState`): the mix effect's replay window must still
    /// run past the update margin. A thread that missed the renewal (the machine stood still past the window)
    /// finds the effect ended, and the change is a play again, which lands at once: written early, it would play
    /// early.
    var changeLead: Double {
        guard diversion?.isActive != true else { return 0 }
        guard mix.withLock({ $0.state.updatesAlone(at: clock.now) }) else { return 0 }
        return reports != nil ? RenderProfile.switchFrameSeconds / 4 : Self.updateLeadSeconds
    }

    /// Half the kernel's tick: 2 ms at the 250 Hz of Debian's kernels, 0.5 ms at 1000 Hz, 5 ms at 100 Hz (at most);
    /// 0 when the kernel does not say.
    private static let updateLeadSeconds: Double = Sys.kernelTickNanoseconds().map { min(Double($0) / 2e9, 0.005) } ?? 0

    private func rumble(_ mix: MotorMagnitudes) -> ForceFeedbackEffect {
        .rumble(strong: mix.strong, weak: mix.weak, lengthMilliseconds: renewal.replayLengthMilliseconds)
    }

    func sendNeutral() throws(OutputFailure) {
        try setMix(.off, explicitly: true)
    }

    func apply(_ levels: MotorMagnitudes) throws(OutputFailure) {
        try setMix(levels, explicitly: false)
    }

    /// A change of level while the mix effect plays is one `EVIOCSFF` update, thanks to the keeper (`keep`). Without
    /// it an update alone would be unsafe, because of how ff-memless treats an update: it clears the effect's
    /// "playing" flag and leaves the new level to its timer on the next tick. A stop arriving before that tick
    /// (our own, or the kernel's when the descriptor closes, even in a crash) then only clears "started"; with no
    /// other effect started ff-memless finds nothing to combine, the driver is never called, and the motors keep
    /// the level from *before* the update, indefinitely. With the keeper started and playing, every ff-memless
    /// pass has an effect to combine and calls the driver: the new level goes out on the next tick (restarting
    /// the effect's replay window, so the update is a renewal too), and a stop before it still reaches the motors.
    /// From rest (or without a keeper) a change is an update, or an upload, then a play. Off is a stop: the effect
    /// keeps its levels, and a later change to the same levels (the same pattern started again) is one play, with
    /// no update. With `explicitly` (a re-attached device) a zero rumble goes out even though nothing of ours
    /// plays yet.
    private func setMix(_ levels: MotorMagnitudes, explicitly: Bool) throws(OutputFailure) {
        if let diversion {
            if diversion.isActive {
                try enterDiversion(diversion)
                try diversion.route(levels)
                return
            }
            // No trigger engine left: the levels go to the kernel again, below.
            diversion.leave()
        }
        try mix.withLock { (slot) throws(OutputFailure) in
            let now = clock.now
            let change = slot.state.change(to: levels, explicitly: explicitly, at: now)
            switch change {
            case .none:
                return
            case .stop:
                guard let effect = slot.effect else { return }
                try Self.translate { () throws(EventDeviceError) in try effect.stop() }
                reports?.called(at: now, moves: false)
                slot.state.playingUntil = 0
                return
            case .update:
                guard let effect = slot.effect else { return }
                // Forgotten first: an update that fails may have left the slot with either level.
                slot.state.levels = nil
                try Self.translate { () throws(EventDeviceError) in try effect.update(rumble(levels)) }
                reports?.called(at: now, moves: !levels.isOff)
                slot.state.levels = levels
                // ff-memless restarted the effect's replay window at the update.
                slot.state.playingUntil = now + renewal.windowSeconds
                return
            case .play, .updateThenPlay, .uploadThenPlay:
                break
            }
            // Once per descriptor, before the mix slot's first upload (or its first play, when a trigger
            // engine kept it away until now).
            keep(&slot)
            let effect: UploadedEffect
            if let existing = slot.effect {
                if change == .updateThenPlay {
                    slot.state.levels = nil
                    try Self.translate { () throws(EventDeviceError) in try existing.update(rumble(levels)) }
                }
                effect = existing
            } else {
                effect = try upload(rumble(levels))
                slot.effect = effect
                slot.state.uploaded = true
            }
            slot.state.levels = levels
            try Self.translate { () throws(EventDeviceError) in try effect.play() }
            reports?.called(at: now, moves: !levels.isOff)
            slot.state.playingUntil = now + renewal.windowSeconds
        }
    }

    /// Uploads and plays the keeper, once per descriptor, when the engine opens the device (`prepareForChanges`) or
    /// else before the mix effect's first upload or play: a rumble at 0 with no replay length, so ff-memless keeps
    /// it started and playing until the descriptor closes and adds nothing to the motors. Its play is two driver
    /// calls at 0, at rest (ff-memless calls again on the next tick for an endless effect). Not on a device with a
    /// single effect slot (the mix needs it), nor on an Xbox pad while a trigger engine writes its report (the
    /// driver's call would write that report with the triggers at 0), nor where the driver queues every call
    /// (`WriteBudget.queuesEveryCall`, hid-nintendo): there a change is one call either way, and the keeper's calls
    /// (two at its play, one more at every close) only fill the 8-frame queue, which then overwrites its newest
    /// frame (a short pulse played right after another pattern was lost in the kernel tests). Except where the
    /// engine follows that driver's frames (`RenderProfile.followsDeviceFrames`): there an update then a play is
    /// one call now and, when the kernel's tick falls between the two, one more (the update's), which puts the next
    /// change a frame late; an update alone is always one call, on the next tick, and every call is counted
    /// (`FramePacing`). A device that refuses it keeps every change an update then a play.
    private func keep(_ slot: inout MixSlot) {
        guard !slot.keeperTried, (capabilities.effectSlots ?? 2) >= 2, diversion?.isActive != true,
            !capabilities.renderProfile.budget.queuesEveryCall || reports != nil
        else { return }
        slot.keeperTried = true
        do throws(EventDeviceError) {
            let keeper = try device.uploadEffect(.rumble(strong: 0, weak: 0, lengthMilliseconds: 0))
            slot.keeper = keeper
            let now = clock.now
            try keeper.play()
            // Its play is a call now and, an endless effect's, another on the next tick.
            reports?.called(at: now, moves: false)
            reports?.called(at: now + Self.updateLeadSeconds * 2, moves: false)
            slot.state.keeperPlays = true
        } catch {
            logger.debug("the keeper effect was refused", metadata: ["error": "\(error)"])
        }
    }

    /// The keeper, played when the engine opens the device rather than just before the first change, so that the
    /// first change (a start from rest, which follows the call by as little as it can) is the mix effect's own
    /// upload and play: the keeper's upload is a round trip to the process behind a uinput device.
    ///
    /// On a pad whose frames the engine follows, the keeper's play is a call from rest, which the driver sends at
    /// once and whose send sets the parity of the frames after it (the first report 25 ms later). Its worker runs a
    /// few milliseconds after the call under load, so a call at any instant could leave that report either one;
    /// made half a report after a report, as every call of the engine is, it leaves none in doubt.
    func prepareForChanges() {
        if let reports, let instant = reports.callInstant(from: clock.now) {
            let wait = instant - clock.now
            if wait > 0 { Sys.sleep(nanoseconds: UInt64(wait * 1e9)) }
        }
        mix.withLock { keep(&$0) }
    }

    /// An upload into the stopped mix slot: ff-memless keeps an effect that is not started without calling the
    /// driver, and a uinput device is told of an upload, not a play. A failure leaves the slot for `apply` to
    /// fill as usual.
    func stage(_ levels: MotorMagnitudes) {
        mix.withLock { slot in
            let change = slot.state.staging(levels, at: clock.now)
            do throws(OutputFailure) {
                switch change {
                case .updateThenPlay:
                    guard let existing = slot.effect else { return }
                    slot.state.levels = nil
                    try Self.translate { () throws(EventDeviceError) in try existing.update(rumble(levels)) }
                case .uploadThenPlay:
                    keep(&slot)
                    slot.effect = try upload(rumble(levels))
                    slot.state.uploaded = true
                case .none, .stop, .play, .update:
                    return
                }
                slot.state.levels = levels
            } catch {
                logger.debug("staging the mix slot failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The mix slot's play when `apply(mix)` would be that one play (`stage(mix)` left the levels in it), else
    /// `apply(mix)` itself.
    func stagedTrigger(for mix: MotorMagnitudes) -> any PulseTrigger {
        let effect = self.mix.withLock { slot -> UploadedEffect? in
            guard diversion?.isActive != true, let effect = slot.effect,
                slot.state.change(to: mix, explicitly: false, at: clock.now) == .play
            else { return nil }
            return effect
        }
        guard let effect else { return BoundApply(output: self, mix: mix) }
        return EvdevStagedPlay(play: effect.trigger(), mix: mix, output: self, presence: diversion?.presence)
    }

    /// After the staged play's write: the slot plays the levels it holds, from now, when nothing changed it since.
    fileprivate func notePlayed(_ levels: MotorMagnitudes, effectID: Int16) {
        mix.withLock { slot in
            guard slot.effect?.id == effectID, slot.state.levels == levels else { return }
            slot.state.playingUntil = clock.now + renewal.windowSeconds
        }
    }

    /// Stops the kernel's mix effect when the levels first go into the pad's report: hid-microsoft writes the
    /// same report with the triggers at 0 at every update of it.
    private func enterDiversion(_ diversion: ReportDiversion) throws(OutputFailure) {
        guard !diversion.isJoined else { return }
        try mix.withLock { (slot) throws(OutputFailure) in
            guard let effect = slot.effect, slot.state.playingUntil > 0 else { return }
            try Self.translate { () throws(EventDeviceError) in try effect.stop() }
            slot.state.playingUntil = 0
        }
    }

    func keepAlive() throws(OutputFailure) {
        if let diversion {
            if diversion.isActive {
                if diversion.isJoined { return try diversion.renew() }
                // A trigger engine started while the kernel plays a steady level: that level joins the report.
                let playing = mix.withLock { $0.state.playingUntil > 0 ? $0.state.levels : nil }
                if let playing {
                    try enterDiversion(diversion)
                    try diversion.route(playing)
                }
                return
            }
            if let routed = diversion.leave() { return try setMix(routed, explicitly: false) }
        }
        try mix.withLock { (slot) throws(OutputFailure) in
            guard let effect = slot.effect, slot.state.playingUntil > 0 else { return }
            let now = clock.now
            // A play of a started effect restarts its replay window: one write, no upload.
            try Self.translate { () throws(EventDeviceError) in try effect.play() }
            reports?.called(at: now, moves: !(slot.state.levels ?? .off).isOff)
            slot.state.playingUntil = clock.now + renewal.windowSeconds
        }
    }

    func prepare(_ pulse: PreparedPulse) throws(OutputFailure) -> Int {
        let length = min(pulse.duration * 1000, Double(NativePeriodicEffect.maximumMilliseconds)).rounded(.up)
        let effect = ForceFeedbackEffect.rumble(
            strong: pulse.mix.strong, weak: pulse.mix.weak, lengthMilliseconds: UInt16(max(length, 1)))
        // A prepared pulse never evicts: the mix slot matters more than a latency optimisation.
        let uploaded = try Self.translate { () throws(EventDeviceError) in try device.uploadEffect(effect) }
        let trigger = EvdevPulseTrigger(effect: uploaded, uses: uses, presence: diversion?.presence)
        return prepared.withLock { state in
            defer { state.nextID += 1 }
            state.slots[state.nextID] = trigger
            return state.nextID
        }
    }

    func trigger(prepared id: Int) throws(OutputFailure) {
        guard let trigger = prepared.withLock({ $0.slots[id] }) else {
            throw OutputFailure(.closed, "the prepared effect \(id) was evicted or released")
        }
        try trigger.fire()
    }

    func pulseTrigger(prepared id: Int) -> (any PulseTrigger)? { prepared.withLock { $0.slots[id] } }

    func stop(prepared id: Int) throws(OutputFailure) {
        try prepared.withLock({ $0.slots[id] })?.stop()
    }

    func release(prepared id: Int) {
        do throws(EventDeviceError) {
            try prepared.withLock { $0.slots.removeValue(forKey: id) }?.retire()
        } catch {
            // A gone device has already dropped the slot; anything else is worth a note, not a failure.
            if error.kind != .deviceGone {
                logger.info("erasing a released effect failed", metadata: ["error": "\(error)"])
            }
        }
    }

    func close() {
        diversion?.leave()
        reports?.reader.close()
        // Closing first: the kernel stops and erases every effect of the descriptor, so the handles dropped
        // below find it closed and issue no erase of their own.
        device.close()
        mix.withLock { $0 = MixSlot() }
        prepared.withLock { $0.slots.removeAll() }
    }

    func currentLevels() -> MotorMagnitudes? { nil }

    /// Uploads into a new slot; on `ENOSPC` evicts the least recently used prepared pulse and retries.
    private func upload(_ effect: ForceFeedbackEffect) throws(OutputFailure) -> UploadedEffect {
        while true {
            do throws(EventDeviceError) {
                return try device.uploadEffect(effect)
            } catch  where error.kind == .noEffectSlot {
                let evicted = prepared.withLock { state -> Int? in
                    guard let victim = state.slots.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key else {
                        return nil
                    }
                    return victim
                }
                guard let evicted else { throw Self.failure(from: error) }
                release(prepared: evicted)
                logger.info("evicted a prepared effect to make room for the mix", metadata: ["prepared": "\(evicted)"])
            } catch {
                throw Self.failure(from: error)
            }
        }
    }

    static func translate<T>(_ body: () throws(EventDeviceError) -> T) throws(OutputFailure) -> T {
        do throws(EventDeviceError) { return try body() } catch { throw failure(from: error) }
    }

    static func failure(from error: EventDeviceError) -> OutputFailure {
        let kind: OutputFailure.Kind
        switch error.kind {
        case .deviceGone, .notFound: kind = .deviceGone
        case .noEffectSlot: kind = .noSlot
        case .permissionDenied: kind = .permissionDenied
        case .noForceFeedback, .invalidRequest: kind = .unsupported
        case .closed: kind = .closed
        case .other: kind = .other
        }
        return OutputFailure(kind, error.description)
    }
}

/// The mix slot's play, for a start of the opening `EvdevOutput.stage(_:)` left in it (the engine's armed staged
/// start): one `EV_FF` write, then the slot noted as playing. On an Xbox pad whose report a trigger engine writes, the
/// start is `apply` instead, and so goes into that report.
final class EvdevStagedPlay: PulseTrigger {
    private let play: EffectTrigger
    private let mix: MotorMagnitudes
    private let output: EvdevOutput
    private let presence: TriggerPresence?

    init(play: EffectTrigger, mix: MotorMagnitudes, output: EvdevOutput, presence: TriggerPresence?) {
        self.play = play
        self.mix = mix
        self.output = output
        self.presence = presence
    }

    @inline(__always)
    func fire() throws(OutputFailure) {
        if let presence, presence.isActive { return try output.apply(mix) }
        try EvdevOutput.translate { () throws(EventDeviceError) in try play.fire() }
        output.notePlayed(mix, effectID: play.effectID)
    }
}

/// The order prepared pulses were last used in: a count every trigger and upload moves on.
final class PulseUses: Sendable {
    private let count = Atomic<UInt64>(0)
    func next() -> UInt64 { count.add(1, ordering: .relaxed).newValue }
}

/// A prepared pulse's slot and its trigger: one `EV_FF` write on the slot's id, then (after the write) a note of
/// the use for eviction. Retired (on release or eviction) it erases the slot once no fire is in flight, and fires
/// no more: the kernel gives an erased slot's id to the next upload, which a late fire would play. On an Xbox pad
/// whose report a trigger engine writes, it refuses (the start goes through the mix, and so into that report).
final class EvdevPulseTrigger: PulseTrigger {
    let effect: UploadedEffect
    private let play: EffectTrigger
    private let uses: PulseUses
    private let used: Atomic<UInt64>
    private let gate = CallGate()
    private let presence: TriggerPresence?

    init(effect: UploadedEffect, uses: PulseUses, presence: TriggerPresence?) {
        self.effect = effect
        play = effect.trigger()
        self.uses = uses
        self.presence = presence
        used = Atomic(uses.next())
    }

    var lastUsed: UInt64 { used.load(ordering: .relaxed) }

    @inline(__always)
    func fire() throws(OutputFailure) {
        if let presence, presence.isActive {
            throw OutputFailure(.unsupported, "a trigger engine writes the pad's report: the pulse plays through it")
        }
        let fired: Void? = try gate.pass { () throws(OutputFailure) in
            try EvdevOutput.translate { () throws(EventDeviceError) in try play.fire() }
        }
        guard fired != nil else { throw OutputFailure(.closed, "the prepared effect \(effect.id) was released") }
        used.store(uses.next(), ordering: .relaxed)
    }

    func stop() throws(OutputFailure) {
        _ = try gate.pass { () throws(OutputFailure) in
            try EvdevOutput.translate { () throws(EventDeviceError) in try effect.stop() }
        }
    }

    /// Erases the slot once no fire is in flight; the first retirement only.
    func retire() throws(EventDeviceError) {
        guard gate.shut() else { return }
        try effect.erase()
    }
}
