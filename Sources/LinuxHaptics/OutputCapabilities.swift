// What the engine reports of its output (`HapticEngine.outputCapabilities`).
public import HapticRendering
public import LinuxInput

/// What an output can do, as the engine reports it.
public struct OutputCapabilities: Sendable, Hashable {
    /// A human-readable name: the device's, or "virtual output".
    public var name: String
    /// The device's stable id, for device outputs.
    public var deviceID: StableDeviceID?
    /// The event node, for device outputs.
    public var node: String?
    /// How many effects the device holds at once (`EVIOCGEFFECTS`); nil when unlimited or unknown.
    public var effectSlots: Int?
    /// Whether the output is a model in this process rather than a device.
    public var isVirtual: Bool
    /// The kernel driver behind the device (`xpad`, `playstation`...), when discovery could tell.
    public var driver: String?
    /// The render profile chosen for this output from its driver and identity (`RenderProfile.forDevice`);
    /// `HapticEngineOptions.renderProfile` overrides it.
    public var renderProfile: RenderProfile
    /// The hidraw node (or, for a USB DualSense, the ALSA device) the engine's patterns are streamed to when it
    /// plays them on actuators beyond the rumble motors: voice coils or HD rumble (`HapticActuators.hd`), or an
    /// Xbox pad's trigger motors (a trigger locality); nil when the rumble motors play them, through `node`.
    public var hdNode: String?
    /// Which actuators `hdNode` drives; nil when the rumble motors play.
    public var hdKind: HDActuators.Kind?
    /// Why the engine drives the rumble motors although HD actuators were asked for: with `.hd`, the pad has none
    /// we drive, or their node may not be written; with `.automatic`, only the latter (a pad without them was not
    /// asked for any). Nil otherwise.
    public var actuatorFallback: String?

    /// Whether the device plays the engine's patterns as periodic effects it runs itself (a PID wheel or joystick:
    /// each event one `FF_PERIODIC` sine, sharpness as its period, `NativePeriodicProgram`) rather than as motor
    /// levels the engine streams.
    public var playsPeriodicEffects = false

    /// Which actuators play the engine's patterns: `.hd` whenever they go through `hdNode`, an Xbox pad's trigger
    /// motors (a trigger locality, `hdKind` `.triggerMotors`) included.
    public var actuators: HapticActuators { hdNode == nil ? .rumble : .hd }

    public init(
        name: String, deviceID: StableDeviceID? = nil, node: String? = nil, effectSlots: Int? = nil, isVirtual: Bool,
        driver: String? = nil, renderProfile: RenderProfile = .genericRumble
    ) {
        self.name = name
        self.deviceID = deviceID
        self.node = node
        self.effectSlots = effectSlots
        self.isVirtual = isVirtual
        self.driver = driver
        self.renderProfile = renderProfile
    }
}

/// What a pad's HD actuators play now: each actuator's peak amplitude (0...1) in the report (or period) heard now,
/// and the frequency felt: on voice coils the waveform's over the last 64 ms heard (rising zero crossings of the
/// louder actuator), on HD rumble the loudest band's; nil while silent.
public struct ActuatorActivity: Sendable, Hashable {
    public var left: Double
    public var right: Double
    public var frequency: Double?

    public init(left: Double, right: Double, frequency: Double?) {
        self.left = left
        self.right = right
        self.frequency = frequency
    }

    /// Still actuators.
    package static let atRest = ActuatorActivity(left: 0, right: 0, frequency: nil)
}

extension OutputCapabilities {
    /// A device output's capabilities: the open event node's name, id, node and effect slots, its driver, and the
    /// profile chosen from them.
    init(device: EventDevice, driver: String?) {
        self.init(
            name: device.identity.name, deviceID: device.id, node: device.node,
            effectSlots: device.forceFeedback.maxEffects, isVirtual: false, driver: driver,
            renderProfile: .forDevice(driver: driver, identity: device.identity, forceFeedback: device.forceFeedback))
    }
}
