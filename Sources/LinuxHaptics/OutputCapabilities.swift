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
