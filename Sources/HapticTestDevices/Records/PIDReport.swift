// A USB HID PID (Physical Interface Device) report as the emulated PID joystick decoded it: what hid-pidff asked
// the device to do (create, set up, play, stop, free an effect block; the device's gain and control). Part of the
// record (`PadRecord.pid`); `PIDPlayback` runs the effects from it. Values are in the kernel's own units where
// the joystick's descriptor makes that exact (levels, times), so a test compares them with the `ff_effect` it
// uploaded; docs/emulation.md states the quantisation of the rest.
internal import LinuxInput

/// The PID effect types the joystick offers (Effect Type usages of the PID page).
public enum PIDEffectType: String, Sendable, Hashable, Codable, CaseIterable {
    case constant
    case square
    case sine
    case triangle
    case sawUp
    case sawDown

    /// The usage on the PID page (0x0F).
    public var usage: UInt16 {
        switch self {
        case .constant: 0x26
        case .square: 0x30
        case .sine: 0x31
        case .triangle: 0x32
        case .sawUp: 0x33
        case .sawDown: 0x34
        }
    }

    public var isPeriodic: Bool { self != .constant }
}

/// Effect Operation: what to do with one effect block.
public enum PIDEffectOperation: String, Sendable, Hashable, Codable, CaseIterable {
    case start
    /// Start this effect and stop every other.
    case startSolo
    case stop
}

/// Device Control: a command to the whole device.
public enum PIDDeviceControl: String, Sendable, Hashable, Codable, CaseIterable {
    case enableActuators
    case disableActuators
    case stopAllEffects
    /// Stop and free every effect block.
    case reset
    case pause
    case `continue`
}

/// What the device answers a Create New Effect with (its Block Load report).
public enum PIDBlockLoadStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case success
    /// No free block: hid-pidff fails the upload with `ENOSPC`.
    case full
    case error
}

/// One decoded PID report. `kind` says which; the fields that report carries are set, the others nil.
public struct PIDReport: Equatable, Hashable, Sendable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case setEffect, setEnvelope, setPeriodic, setConstant, effectOperation, blockFree, deviceGain
        case deviceControl, createNewEffect
    }

    public var kind: Kind
    /// The effect block (1...): every report about one effect; Create New Effect: the block the device loaded
    /// (nil when it was full).
    public var blockIndex: Int?
    /// Set Effect and Create New Effect.
    public var effectType: PIDEffectType?
    /// Set Effect: play length in ms, the kernel's `replay.length` (0xffff plays until stopped; 0 plays nothing.
    /// The bench's 6.1.192 sends the API's "until stopped", length 0, as 0xffff; older 6.1 kernels sent 0).
    public var duration: Int?
    /// Set Effect: ms before the effect starts (`replay.delay`).
    public var startDelay: Int?
    public var triggerButton: Int?
    public var triggerRepeatInterval: Int?
    /// Set Effect: the effect's gain, 0...1 (hid-pidff always sends the maximum). Device Gain: the device's
    /// gain, 0...1 in steps of 1/10000.
    public var gain: Double?
    /// Set Effect: the direction, 0...1 of a full turn (the kernel's 0...0xffff, in steps of 1/255).
    public var direction: Double?
    /// Set Envelope: levels in the kernel's 0...0x7fff, times in ms (exact).
    public var attackLevel: Int?
    public var attackTime: Int?
    public var fadeLevel: Int?
    public var fadeTime: Int?
    /// Set Periodic and Set Constant: the magnitude (Set Constant: the level), in the kernel's -0x8000...0x7fff
    /// (exact).
    public var magnitude: Int?
    /// Set Periodic: the offset, -0x8000...0x7fff (exact).
    public var offset: Int?
    /// Set Periodic: the phase in the kernel's 0...0xffff of a cycle (within 2: the report carries half).
    public var phase: Int?
    /// Set Periodic: the period in ms (exact).
    public var period: Int?
    /// Effect Operation.
    public var operation: PIDEffectOperation?
    /// Effect Operation (start): how many times to play, back to back.
    public var loopCount: Int?
    /// Device Control.
    public var control: PIDDeviceControl?
    /// Create New Effect: what the device answered (its next Block Load report).
    public var status: PIDBlockLoadStatus?

    public init(_ kind: Kind, blockIndex: Int? = nil) {
        self.kind = kind
        self.blockIndex = blockIndex
    }
}
