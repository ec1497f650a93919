/// What the renderer needs to know about an output device: which motors it has, how finely it resolves a
/// magnitude, how often an update is worth sending, whether it plays `FF_PERIODIC` itself, how transients are
/// stretched into pulses its motors can produce, and a master gain.
///
/// The numbers of the built-in profiles come from the kernel drivers' code paths; `docs/rendering.md` gives the
/// source of each.
public struct RenderProfile: Sendable, Hashable {
    /// The name used on the command line (`--profile`).
    public var name: String
    /// Whether the strong (low-frequency, left) motor exists.
    public var hasStrongMotor: Bool
    /// Whether the weak (high-frequency, right) motor exists.
    public var hasWeakMotor: Bool
    /// The number of steps above zero the driver forwards for the strong motor (255 for an 8-bit report
    /// byte, 100 for a percentage, 1 for on/off, 65535 for the full `FF_RUMBLE` range). At least 1, however it
    /// is set: 0 steps made every level NaN.
    public var strongSteps: Int {
        didSet { strongSteps = Swift.max(strongSteps, 1) }
    }
    /// The same for the weak motor.
    public var weakSteps: Int {
        didSet { weakSteps = Swift.max(weakSteps, 1) }
    }
    /// The shortest useful time between two updates, in seconds: faster updates are coalesced by the driver
    /// (one report in flight, only the latest pending state kept) or overrun the firmware. Within 0 ...
    /// `longestUpdateInterval`, NaN as 0, however it is set.
    public var minimumUpdateInterval: Double {
        didSet { minimumUpdateInterval = Self.usableInterval(minimumUpdateInterval) }
    }
    /// Whether the driver implements `FF_PERIODIC` itself (waveforms, envelopes, replay delays in the device)
    /// rather than ff-memless emulating it as a plain rumble of |magnitude| on both motors.
    public var supportsNativePeriodic: Bool
    /// How a transient becomes a pulse the motors can produce.
    public var transientPulse: TransientPulse
    /// Master gain applied to every level before quantisation, 0...1 (NaN is 0), however it is set.
    public var gain: Double {
        didSet { gain = PureMath.unitClamped(gain) }
    }
    /// How many writes the device takes and what a write costs there: where the planner spends them.
    public var budget: WriteBudget
    /// Seconds from a write to the motors' change, typically, where the driver holds changes back for longer
    /// than a motor takes to respond (0 elsewhere): the engine writes each change this far ahead of its time,
    /// and starts a player asked to start now this far from now, so that what the hand feels keeps the
    /// pattern's timing and its sound's. A property of the device, not of how its patterns are planned. Finite
    /// and at least 0 (0 otherwise), however it is set.
    public var outputLatency: Double {
        didSet { outputLatency = Self.usableLatency(outputLatency) }
    }
    /// Whether the engine plans on the device's own frames when it knows them (`DeviceCommandPlanner.frames`):
    /// a command on a frame instant at most once a frame, each the mean over its frame, and nothing that writes
    /// between two (no prepared pulse, no opening on the caller's thread). Chosen from the device, never by name.
    public var followsDeviceFrames: Bool

    public init(
        name: String, hasStrongMotor: Bool = true, hasWeakMotor: Bool = true, strongSteps: Int, weakSteps: Int,
        minimumUpdateInterval: Double, supportsNativePeriodic: Bool = false,
        transientPulse: TransientPulse = .rumbleMotor, gain: Double = 1, budget: WriteBudget? = nil,
        outputLatency: Double = 0, followsDeviceFrames: Bool = false
    ) {
        self.name = name
        self.hasStrongMotor = hasStrongMotor
        self.hasWeakMotor = hasWeakMotor
        self.strongSteps = Swift.max(strongSteps, 1)
        self.weakSteps = Swift.max(weakSteps, 1)
        self.minimumUpdateInterval = Self.usableInterval(minimumUpdateInterval)
        self.supportsNativePeriodic = supportsNativePeriodic
        self.transientPulse = transientPulse
        self.gain = PureMath.unitClamped(gain)
        self.budget = budget ?? WriteBudget(minimumUpdateInterval: self.minimumUpdateInterval)
        self.outputLatency = Self.usableLatency(outputLatency)
        self.followsDeviceFrames = followsDeviceFrames
    }

    /// `latency` when finite and at least 0, else 0.
    static func usableLatency(_ latency: Double) -> Double { latency.isFinite ? Swift.max(latency, 0) : 0 }

    /// The longest `minimumUpdateInterval` a profile takes: a longer one is taken as this. No device waits a
    /// second between two updates.
    public static let longestUpdateInterval = 1.0

    /// `interval` within 0 ... `longestUpdateInterval`, NaN as 0: an infinite interval made the engine's plan
    /// horizon infinite, and its planning of a loop never ended (until 6 December).
    static func usableInterval(_ interval: Double) -> Double {
        interval.isNaN ? 0 : Swift.min(Swift.max(interval, 0), longestUpdateInterval)
    }

    /// This profile with another master gain (clamped to 0...1; NaN is 0).
    public func withGain(_ gain: Double) -> RenderProfile {
        var copy = self
        copy.gain = PureMath.unitClamped(gain)
        return copy
    }

    /// This profile on a pad with only some of its motors (a lone Joy-Con: hid-nintendo sends the strong level to the
    /// left Joy-Con's actuator and the weak level to the right one's). On a pad with one motor the renderer puts a
    /// pattern's whole level on it (`PatternRenderer`), and the planner never drives a motor the pad lacks.
    public func withMotors(strong: Bool, weak: Bool) -> RenderProfile {
        var copy = self
        copy.hasStrongMotor = strong
        copy.hasWeakMotor = weak
        return copy
    }

    /// What a pad of this profile plays of `levels`, a mix of the `all` locality made for two motors: on a pad with
    /// one motor (a Joy-Con) the louder of the two, on that motor, which is the whole level of any one event (its
    /// dominant motor carries it: `EnvelopeTiming.motorShares`); elsewhere `levels` as they are. A mix made for pads
    /// of several kinds at once (a left and a right Joy-Con driven as one) puts a sharp event on the weak motor,
    /// which a left Joy-Con does not have. (A mix rendered for the one motor has nothing on the other, and comes out
    /// as it went in; a handle's locality is not folded: its side is its meaning.)
    public func onItsMotors(_ levels: MotorMagnitudes) -> MotorMagnitudes {
        switch (hasStrongMotor, hasWeakMotor) {
        case (true, false): MotorMagnitudes(strong: Swift.max(levels.strong, levels.weak), weak: 0)
        case (false, true): MotorMagnitudes(strong: 0, weak: Swift.max(levels.strong, levels.weak))
        default: levels
        }
    }

    /// The full range of `FF_RUMBLE`'s 16-bit magnitudes.
    public static let fullRumbleSteps = 65535
    /// One byte per motor in the output report (`magnitude / 256` in the driver).
    static let byteSteps = 255

    /// Any rumble pad we know nothing about: 8-bit (the common report format), no more than 50 updates a second
    /// over any stretch longer than a few of them (the rate above which some pads' firmware is said to
    /// misbehave), and changes as close as 10 ms in a short burst (`WriteBudget.sustained(writesPerSecond:)`):
    /// every ff-memless driver measured but hid-nintendo (which has a profile of its own) puts updates 2 ms apart
    /// on the wire (docs/devices.md), and taps closer than 20 ms, which a game's patterns are full of, need it.
    public static let genericRumble = RenderProfile(
        name: "generic", strongSteps: byteSteps, weakSteps: byteSteps, minimumUpdateInterval: 0.010,
        budget: .sustained(writesPerSecond: 50))

    /// xpad (Xbox 360 wired and wireless): `strong / 256` into one report byte per motor; the driver keeps a
    /// single interrupt-OUT packet in flight and overwrites the pending one, so updates faster than the
    /// endpoint's polling interval (4-8 ms) are lost rather than queued; 10 ms leaves one interval of slack.
    public static let xpad = RenderProfile(
        name: "xpad", strongSteps: byteSteps, weakSteps: byteSteps, minimumUpdateInterval: 0.010,
        budget: .reportPerCall(interval: 0.010))

    /// DualSense (hid-playstation): `magnitude / 256` per motor; play only stores the levels and schedules the
    /// output worker, which sends the whole output report (LEDs, triggers, rumble): a burst of updates between
    /// two worker runs collapses into one report. 10 ms keeps Bluetooth output below the input report rate.
    public static let dualSense = RenderProfile(
        name: "dualsense", strongSteps: byteSteps, weakSteps: byteSteps, minimumUpdateInterval: 0.010,
        budget: .reportPerCall(interval: 0.010))

    /// DualShock 4 (hid-sony / hid-playstation): the same `/ 256` bytes and worker-coalesced output report.
    public static let dualShock4 = RenderProfile(
        name: "dualshock4", strongSteps: byteSteps, weakSteps: byteSteps, minimumUpdateInterval: 0.010,
        budget: .reportPerCall(interval: 0.010))

    /// Xbox One S / Series pads over Bluetooth (hid-microsoft): `magnitude / 655`, i.e. 0...100 per motor, sent
    /// from a work item over Bluetooth HID. 50 updates a second sustained keeps well inside the link's output
    /// budget and below the 60 a game's frame loop sends through this driver; a short burst 10 ms apart, as a
    /// game at 100 frames a second sends, follows taps closer than 20 ms (`WriteBudget.sustained`).
    public static let xboxBluetooth = RenderProfile(
        name: "xbox-bluetooth", strongSteps: 100, weakSteps: 100, minimumUpdateInterval: 0.010,
        budget: .sustained(writesPerSecond: 50))

    /// DualShock 3 (hid-sony sixaxis): the strong motor takes a byte (`/ 256`), the weak motor is only on or
    /// off (`right_motor_on = right ? 1 : 0`). Over USB the report goes out as a control transfer
    /// (SET_REPORT), the slowest path of all: 20 ms.
    public static let dualShock3 = RenderProfile(
        name: "dualshock3", strongSteps: byteSteps, weakSteps: 1, minimumUpdateInterval: 0.020,
        budget: .reportPerCall(interval: 0.020))

    /// Switch Pro Controller and Joy-Cons (hid-nintendo), measured on the emulated Pro Controller: the driver
    /// turns each motor's magnitude into one of 101 HD rumble amplitudes (`magnitude * 1003 / 0xffff`, rounded
    /// up to its table) at fixed frequencies (strong: left actuator, 160 Hz low band; weak: right, 320 Hz high
    /// band), queues it, and sends at most one rumble frame per 25 ms, and then only when an input report
    /// arrives (every 15 ms): frames leave every 30 ms. Faster updates overrun its 8-frame queue. Its linear
    /// resonant actuators start at once, but a pulse must still span two frames to be sent as an on and an off.
    /// Its budget (26 calls a second, a burst of 2) is what keeps the queue from overflowing, and renewals every
    /// 40 ms spend nearly all of it while a level holds: a drift here waits for a five times looser hold error than
    /// elsewhere (a full-range ramp in 200 ms gets a write per interval), which leaves the budget to the jumps.
    /// A change reaches the pad a frame or two after its call (the driver first resends the frame it sent last):
    /// `switchOutputLatency`.
    public static let switchPro = RenderProfile(
        name: "switch", strongSteps: 100, weakSteps: 100, minimumUpdateInterval: 0.030,
        transientPulse: TransientPulse(length: 0.060),
        budget: WriteBudget(
            writesPerSecond: 26, burst: 2, renewalInterval: 0.040,
            holdError: WriteBudget.holdError(fullRampSeconds: 0.2, interval: 0.030), queuesEveryCall: true),
        outputLatency: switchOutputLatency)

    /// hid-nintendo's delay from a call to the frame that carries it, at the median over the phases of its frames:
    /// 45 ms for 100 changes on the emulated Pro Controller (`scripts/bench --kernel-only "Driver switch-pro"`,
    /// update to report). One change lands up to about 15 ms either side, as its call falls against the frames.
    public static let switchOutputLatency = 0.045

    /// hid-nintendo on a pad whose input reports the engine reads (its motion node: `FramePacing`), so that it
    /// knows when each frame goes out: a call made `FramePacing.callLead` before a frame instant is carried by the
    /// frame after it, from rest as from a queue, so each command goes on a frame instant, one frame and the lead
    /// ahead (`outputLatency`), and carries the pattern's mean over the frame it starts. One call a frame at most,
    /// renewals included (each frame renews the level): the queue never holds more than the frame being sent. Its
    /// minimum interval is half a frame: the frames space the commands, and a grid the reports corrected by a
    /// fraction of a millisecond since the last command never holds the next one back. Steps, pulses and the
    /// frames' period are `switch`'s. Chosen from the device, never by name: not in `builtIn`.
    public static let switchProOnFrames = RenderProfile(
        name: "switch-frames", strongSteps: 100, weakSteps: 100, minimumUpdateInterval: switchFrameSeconds / 2,
        transientPulse: TransientPulse(length: 0.060),
        budget: WriteBudget(
            writesPerSecond: 1 / switchFrameSeconds, burst: 2, renewalInterval: switchFrameSeconds,
            holdError: WriteBudget.holdError(fullRampSeconds: 0.2, interval: switchFrameSeconds), queuesEveryCall: true),
        outputLatency: switchFrameSeconds + FramePacing.callLead, followsDeviceFrames: true)

    /// `switchProOnFrames` on a kernel whose frames leave `sendDelay` after the reports that decide them
    /// (`FramePacing.Rules.sendDelay`): each command written that much earlier.
    public static func switchProOnFrames(sendDelay: Double) -> RenderProfile {
        var profile = switchProOnFrames
        profile.outputLatency += sendDelay.isFinite ? Swift.max(sendDelay, 0) : 0
        return profile
    }

    /// hid-nintendo's frames at the pad's 15 ms reports: one every other report.
    public static let switchFrameSeconds = 0.030

    /// Our uinput virtual pad (`haptics virtual-pad`): it records the full 16-bit magnitudes and models
    /// ff-memless at the kernel's tick (`CONFIG_HZ` 250 on Debian: 4 ms), so an update finer than one tick
    /// cannot be told apart.
    public static let virtualPad = RenderProfile(
        name: "virtual", strongSteps: fullRumbleSteps, weakSteps: fullRumbleSteps, minimumUpdateInterval: 0.004,
        budget: .reportPerCall(interval: 0.004))

    /// A force-feedback device that plays periodic effects itself (a USB PID wheel or joystick, hid-pidff): each
    /// event is one `FF_PERIODIC` sine the device runs (`NativePeriodicProgram`), at the kernel's 15-bit
    /// magnitudes; an event whose controls change under it is followed by updates of its effect, each one output
    /// report on the USB interrupt endpoint, at most every 20 ms. Chosen from the device's force feedback
    /// (`ForceFeedbackCapabilities.runsWaveformsItself`), never from a name: not in `builtIn`.
    public static let periodicForce = RenderProfile(
        name: "pid", strongSteps: 0x7fff, weakSteps: 0x7fff, minimumUpdateInterval: 0.020,
        supportsNativePeriodic: true, budget: .reportPerCall(interval: 0.020))

    /// Every built-in profile, in documentation order.
    public static let builtIn: [RenderProfile] = [
        .genericRumble, .xpad, .dualSense, .dualShock4, .xboxBluetooth, .dualShock3, .switchPro, .virtualPad,
    ]

    /// The built-in profile called `name`, `nil` when there is none.
    public static func named(_ name: String) -> RenderProfile? {
        builtIn.first { $0.name == name }
    }
}

/// How a transient (an instant in AHAP) is stretched into something a rumble motor can produce.
///
/// An eccentric-mass motor needs tens of milliseconds to spin up: a 1-5 ms drive is not felt at all.
/// The pulse is a flat top at the transient's intensity lasting `length`, then a linear ramp down over the
/// event's `DecayTime` (see `EnvelopeTiming`).
public struct TransientPulse: Sendable, Hashable {
    /// The flat top of every transient, in seconds: within 0 ... `longestLength`, NaN as 0, however it is set. A NaN
    /// length made a renderer unequal to itself, and an engine that renders a player again until its renderer is
    /// the one in use spun for ever in `makePlayer` and `start()` (until 7 December).
    public var length: Double {
        didSet { length = Self.usableLength(length) }
    }

    public init(length: Double) {
        self.length = Self.usableLength(length)
    }

    /// The longest pulse a transient becomes: a second is more than any motor takes to reach full speed, and a tap
    /// held longer is a continuous event's job.
    public static let longestLength = 1.0

    static func usableLength(_ length: Double) -> Double {
        length.isNaN ? 0 : Swift.min(Swift.max(length, 0), longestLength)
    }

    /// 40 ms: long enough for a gamepad's eccentric-mass motor to approach full speed, two update intervals of
    /// the slowest profile (so the on and off commands are never merged by rate limiting), and shorter than the
    /// 50 ms minimum spacing of the app's feedback vocabulary so rapid taps stay distinct. Apple's 100 ms
    /// blurs taps 50 ms apart; Lofelt's 30 ms was tuned for phone actuators, which spin up faster.
    public static let rumbleMotor = TransientPulse(length: 0.040)
}

/// How many writes a device takes, what one change costs in them, and how much error a held level may
/// collect before a new one is worth a write (`DeviceCommandPlanner`).
///
/// A write is what the device's driver turns into one report or frame: one driver call on the kernel's
/// ff-memless drivers. The writes in any window of T seconds stay within `burst + writesPerSecond · T`,
/// renewals of a held level included.
public struct WriteBudget: Sendable, Hashable {
    // Each value is held to the initialiser's rules however it is set: a rate of -1 set on a budget made sound
    // left the planner waiting for ever for writes that never came back.

    /// The writes a second the device takes for as long as a pattern lasts; `infinity`: as many as the minimum
    /// interval lets through, as for a rate not above 0 or NaN.
    public var writesPerSecond: Double {
        didSet {
            writesPerSecond = Self.usableRate(writesPerSecond)
            renewalInterval = Self.usableRenewalInterval(
                renewalInterval, writesPerSecond: writesPerSecond, writesPerChange: writesPerChange)
        }
    }
    /// The writes it takes at once above that rate, from rest: at least `writesPerChange`, 1 (or that) when not
    /// finite.
    public var burst: Double {
        didSet { burst = Self.usableBurst(burst, writesPerChange: writesPerChange) }
    }
    /// The writes one level change costs on the driver (frames or reports sent for one call): 1 when not above 0
    /// and finite.
    public var writesPerChange: Double {
        didSet {
            writesPerChange = Self.usableCost(writesPerChange)
            burst = Self.usableBurst(burst, writesPerChange: writesPerChange)
            renewalInterval = Self.usableRenewalInterval(
                renewalInterval, writesPerSecond: writesPerSecond, writesPerChange: writesPerChange)
        }
    }
    /// While a non-zero level holds, the engine renews it (its self-expiry) this long after the last write; each
    /// renewal costs `writesPerChange`. `nil`: the planner counts no renewals. Within `renewalIntervals` and at
    /// least what the rate pays for, however it is set (`usableRenewalInterval`); NaN is nil.
    public var renewalInterval: Double? {
        didSet {
            renewalInterval = Self.usableRenewalInterval(
                renewalInterval, writesPerSecond: writesPerSecond, writesPerChange: writesPerChange)
        }
    }
    /// The squared error (level² · seconds, both motors summed) one held level may collect before a new level is
    /// worth a write: a ramp of slope k gets a write every (12 · holdError / k²)^(1/3) seconds. One not above 0
    /// and finite is the smallest, a write at every step.
    public var holdError: Double {
        didSet { holdError = Self.usableHoldError(holdError) }
    }
    /// Whether the driver queues a frame for every call, changed or not, and sends its frames paced by the pad
    /// (hid-nintendo): a call that changes nothing still takes a frame of a small queue, and the motors follow the
    /// kernel's end of an effect only once the queued frames have gone out.
    public var queuesEveryCall: Bool

    /// A budget; a renewal interval too short for the rate to pay for its renewals is lengthened to the shortest
    /// the rate pays for, so that renewals never overdraw it (up to the longest of `renewalIntervals`).
    public init(
        writesPerSecond: Double, burst: Double, writesPerChange: Double = 1, renewalInterval: Double? = nil,
        holdError: Double, queuesEveryCall: Bool = false
    ) {
        let rate = Self.usableRate(writesPerSecond)
        let cost = Self.usableCost(writesPerChange)
        self.writesPerSecond = rate
        self.writesPerChange = cost
        self.burst = Self.usableBurst(burst, writesPerChange: cost)
        self.renewalInterval = Self.usableRenewalInterval(renewalInterval, writesPerSecond: rate, writesPerChange: cost)
        self.holdError = Self.usableHoldError(holdError)
        self.queuesEveryCall = queuesEveryCall
    }

    static func usableRate(_ rate: Double) -> Double { rate > 0 ? rate : .infinity }
    static func usableCost(_ cost: Double) -> Double { cost > 0 && cost.isFinite ? cost : 1 }
    static func usableBurst(_ burst: Double, writesPerChange cost: Double) -> Double {
        Swift.max(burst.isFinite ? burst : 1, cost)
    }
    static func usableHoldError(_ error: Double) -> Double { error > 0 && error.isFinite ? error : smallestHoldError }

    /// The budget of a profile that says nothing but its minimum interval: no limit beyond that interval, and the
    /// standard hold error.
    public init(minimumUpdateInterval interval: Double) {
        self.init(writesPerSecond: .infinity, burst: 1, holdError: Self.standardHoldError)
    }

    /// The hold error of the built-in budgets but `switch`'s and the sustained ones' (`sustainedHoldError`): a ramp
    /// over the full range in a second gets a write every 20 ms (a gentler one of slope k fewer, as k^(2/3); a
    /// steeper one more, down to the profile's minimum interval). A game's gentle fades are this slow, and a budget
    /// that left them a write per 60 ms lost them to a 60 Hz loop. It is a tolerance of the pattern's shape, the
    /// same on every device whose writes cost the same: a faster device gets more writes only where the pattern is
    /// steeper (setting it by the DualSense's own 10 ms instead bought 1.4 times the writes host-side, 1.14 times
    /// on the emulated pad, for no less error).
    public static let standardHoldError = holdError(fullRampSeconds: 1, interval: 0.020)

    /// The hold error at which a ramp over the full range in `fullRampSeconds` gets one write every `interval`.
    public static func holdError(fullRampSeconds: Double, interval: Double) -> Double {
        let slope = 1 / fullRampSeconds
        return slope * slope * interval * interval * interval / 12
    }

    /// The renewal intervals a budget takes: one of 0 had the planner count renewals that never moved time on
    /// (listing a plan's writes never ended), and the engine's effect lasts as long as its renewal interval and a
    /// margin, in 16-bit milliseconds. A renewal a millisecond after a write is as often as the kernel's timers
    /// can renew; no device plays a level a second without one.
    public static let renewalIntervals: ClosedRange<Double> = 0.001...1.0

    /// `interval` within `renewalIntervals`, then lengthened to the shortest that `writesPerSecond` pays for at
    /// `writesPerChange` a renewal, up to the longest of the range; NaN (no interval) is nil, as nil is.
    static func usableRenewalInterval(_ interval: Double?, writesPerSecond: Double, writesPerChange: Double)
        -> Double?
    {
        guard let interval, !interval.isNaN else { return nil }
        let paid = writesPerSecond.isFinite && writesPerSecond > 0 ? writesPerChange / writesPerSecond * (1 + 1e-9) : 0
        let shortest = renewalIntervals.lowerBound
        let longest = renewalIntervals.upperBound
        return Swift.min(Swift.max(interval, shortest, paid.isNaN ? shortest : paid), longest)
    }

    /// Below this a hold error means "a write at every step": the planner still moves forward.
    static let smallestHoldError = 1e-15

    /// How often the engine renews a steady non-zero level unless a driver needs otherwise: 50 ms, 20 writes a
    /// second while a level holds, a third of a game's per-frame rumble updates at 60 Hz.
    public static let standardRenewalInterval = 0.050

    /// A driver that sends one report per call (ff-memless and its report worker): one write per change, at most
    /// one per `interval` on average with a burst of three, renewals every 50 ms (the engine's self-expiry), and
    /// the standard hold error.
    public static func reportPerCall(interval: Double) -> WriteBudget {
        WriteBudget(
            writesPerSecond: 1 / interval, burst: 3, renewalInterval: standardRenewalInterval,
            holdError: standardHoldError)
    }

    /// A driver that sends one report per call at any spacing (ff-memless and its report worker), on a pad kept to
    /// `writesPerSecond` over any stretch longer than a burst of `sustainedBurst`, with the minimum interval of
    /// its profile between two writes: a short run of close changes (taps, a decay) goes out as written, a long
    /// one at the rate. Renewals every 50 ms. Its writes are dearer than a `reportPerCall(interval:)` budget's at
    /// the same interval, so a drift buys one with more error (`sustainedHoldError`), and the writes the rate
    /// leaves go to the steep stretches and the jumps.
    public static func sustained(writesPerSecond: Double) -> WriteBudget {
        WriteBudget(
            writesPerSecond: writesPerSecond, burst: sustainedBurst, renewalInterval: standardRenewalInterval,
            holdError: sustainedHoldError)
    }

    /// The burst of a `sustained(writesPerSecond:)` budget: 8 writes, which with the rate refilling as they go
    /// (at 50 a second) let 15 changes go out 10 ms apart, a steep stretch of 140 ms, from rest. Fewer
    /// starve a steep stretch's end: with 4 or 5, a 100 ms rise to full spent them, and the cut to rest after it
    /// went out 5 ms late at full level (twice SDL's error on such a pattern, host-side); from 6 on, 0.4 times.
    public static let sustainedBurst = 8.0

    /// The hold error of a `sustained(writesPerSecond:)` budget: a ramp over the full range in a second gets a
    /// write every 40 ms, twice the standard spacing (eight times the error a hold may collect). On a 50
    /// writes a second budget with changes 10 ms apart, the standard hold error spent 1.20 times the writes of the
    /// 20 ms budget before it, and this one the same writes (1.01 times), for 0.69 times its error against SDL's
    /// haptic loop (the 8 patterns of the peers bench, host-side): a write does more at a jump or a steep stretch
    /// than on a gentle slope, where a motor's inertia smooths a step of a few per cent anyway.
    public static let sustainedHoldError = holdError(fullRampSeconds: 1, interval: 0.040)

    /// Whether the rate limits anything (a finite `writesPerSecond`).
    public var isLimited: Bool { writesPerSecond.isFinite }
}

extension WriteBudget {
    /// Two writes closer than this (a nanosecond) are one: a renewal due as a command goes out is that command.
    static let sameInstant = 1e-9

    /// When a device gets a write under a plan: each command, and each renewal of a non-zero level held longer
    /// than `renewalInterval` since the last write. Each costs `writesPerChange`.
    public func writeTimes(of commands: [RumbleCommand]) -> [Double] {
        var times: [Double] = []
        for (index, command) in commands.enumerated() {
            times.append(command.time)
            guard let renewal = renewalInterval, !command.levels.isOff, index + 1 < commands.count else { continue }
            let next = commands[index + 1].time
            var time = command.time + renewal
            while time < next - Self.sameInstant {
                times.append(time)
                time += renewal
            }
        }
        return times
    }
}
