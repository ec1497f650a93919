// How a device is told to people (a plain-language summary) and to programs (the JSON schema of
// `haptics devices --json`, `probe --json` and `monitor --json`, documented in docs/devices.md, and the text
// they print, which the C library's `lh_devices_json` gives too).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension InputDevice {
    /// Drivers that register through the kernel's ff-memless (`input_ff_create_memless`), which emulates
    /// `FF_PERIODIC` on rumble motors: both motors get the magnitude, the waveform is ignored.
    static let memlessDrivers: Set<String> = ["xpad", "playstation", "sony", "microsoft", "nintendo"]

    /// One sentence on what the device is and can do, e.g. "Gamepad with rumble (a strong and a weak
    /// motor), 16 effect slots, periodic effects emulated by the kernel as rumble; adjustable gain."
    public var summary: String {
        let kind = isGamepad ? "Gamepad" : "Input device (not a gamepad)"
        let ff = forceFeedback
        guard ff.isAvailable else { return "\(kind) without force feedback." }

        var parts: [String] = []
        if ff.effects.contains(.rumble) {
            // On a device that runs periodic effects, the input core offers rumble as a sine of its own.
            parts.append(
                ff.runsWaveformsItself
                    ? "rumble emulated by the kernel as a 50 ms sine" : "rumble (a strong and a weak motor)")
        }
        let others = ff.effects.filter { $0 != .rumble && $0 != .periodic }.map(\.name)
        if !others.isEmpty { parts.append("effects " + others.joined(separator: ", ")) }
        if let slots = ff.maxEffects {
            parts.append(slots == 1 ? "1 effect slot" : "\(slots) effect slots")
        } else {
            parts.append("effect slots unknown (the node could not be opened)")
        }
        if ff.effects.contains(.periodic) {
            if let driver, Self.memlessDrivers.contains(driver) {
                parts.append("periodic effects emulated by the kernel as rumble (waveform ignored)")
            } else if ff.runsWaveformsItself {
                let waves = ff.waveforms.map(\.name)
                parts.append(
                    "periodic effects the device runs itself"
                        + (waves.isEmpty ? "" : " (" + waves.joined(separator: ", ") + ")")
                        + ": a force-feedback device whose force moves the controls, played (each event a periodic "
                        + "effect) only when allowed: haptics --allow-force-devices, HapticEngineOptions.allowsForceDevices"
                )
            } else {
                let waves = ff.waveforms.map(\.name)
                parts.append("periodic effects" + (waves.isEmpty ? "" : " (" + waves.joined(separator: ", ") + ")"))
            }
        }
        var properties: [String] = []
        if ff.gain { properties.append("adjustable gain") }
        if ff.autocenter { properties.append("autocenter") }
        let tail = properties.isEmpty ? "" : "; " + properties.joined(separator: ", ")
        let accessNote: String
        switch access {
        case .readWrite: accessNote = ""
        case .readOnly: accessNote = " Opened read-only: effects cannot be played."
        case .denied: accessNote = " No access to the node."
        }
        let hd: String
        if let hdActuators {
            let what = hdActuators.kind.summary
            let held = hdActuators.soundCardHolder.map {
                ", which \($0) holds: the engine reaches it only through a sound server's output on the card"
            }
            hd =
                hdActuators.isDrivable
                ? " \(what) through \(hdActuators.node ?? hdActuators.soundCard ?? "")\(held ?? "")."
                : " \(what) not reachable: \(hdActuators.unavailableReason ?? "")."
        } else {
            hd = ""
        }
        return "\(kind) with " + parts.joined(separator: ", ") + tail + "." + accessNote + hd
    }
}

extension InputDevice: Encodable {
    enum CodingKeys: String, CodingKey {
        case id, node, name, bus, vendor, product, version, uniq, phys, sysName, sysPath
        case isGamepad, gamepadEvidence, access, accessReason, driver, capabilitySource, forceFeedback, summary
        case hdActuators, localities
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id.rawValue, forKey: .id)
        try container.encode(identity.node, forKey: .node)
        try container.encode(identity.name, forKey: .name)
        try container.encode(identity.bus.name, forKey: .bus)
        try container.encode(hex(identity.vendor, digits: 4), forKey: .vendor)
        try container.encode(hex(identity.product, digits: 4), forKey: .product)
        try container.encode(hex(identity.version, digits: 4), forKey: .version)
        try container.encode(identity.uniq, forKey: .uniq)
        try container.encode(identity.phys, forKey: .phys)
        try container.encode(identity.sysName, forKey: .sysName)
        try container.encode(identity.sysPath, forKey: .sysPath)
        try container.encode(isGamepad, forKey: .isGamepad)
        try container.encode(gamepadEvidence.rawValue, forKey: .gamepadEvidence)
        try container.encode(access.name, forKey: .access)
        try encodeOrNull(access.reason, .accessReason, in: &container)
        try encodeOrNull(driver, .driver, in: &container)
        try container.encode(capabilitySource.rawValue, forKey: .capabilitySource)
        try container.encode(forceFeedback, forKey: .forceFeedback)
        try container.encode(summary, forKey: .summary)
        try encodeOrNull(hdActuators, .hdActuators, in: &container)
        try container.encode(localities, forKey: .localities)
    }
}

extension HDActuators: Encodable {
    enum CodingKeys: String, CodingKey {
        case kind, node, soundCard, soundCardHeldBy, writable, reason
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind.rawValue, forKey: .kind)
        try encodeOrNull(node, .node, in: &container)
        try encodeOrNull(soundCard, .soundCard, in: &container)
        if soundCard != nil { try encodeOrNull(soundCardHolder, .soundCardHeldBy, in: &container) }
        try container.encode(writable, forKey: .writable)
        try encodeOrNull(unavailableReason, .reason, in: &container)
    }
}

extension ForceFeedbackCapabilities: Encodable {
    enum CodingKeys: String, CodingKey {
        case effects, waveforms, gain, autocenter, maxEffects, runsWaveformsItself
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(effects.map(\.name), forKey: .effects)
        try container.encode(runsWaveformsItself, forKey: .runsWaveformsItself)
        try container.encode(waveforms.map(\.name), forKey: .waveforms)
        try container.encode(gain, forKey: .gain)
        try container.encode(autocenter, forKey: .autocenter)
        try encodeOrNull(maxEffects, .maxEffects, in: &container)
    }
}

extension DeviceEvent: Encodable {
    enum CodingKeys: String, CodingKey {
        case event, id, node, name, isGamepad, access
    }

    /// One line of `haptics monitor --json`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind.rawValue, forKey: .event)
        try container.encode(device.id.rawValue, forKey: .id)
        try container.encode(device.node, forKey: .node)
        try container.encode(device.name, forKey: .name)
        try container.encode(device.isGamepad, forKey: .isGamepad)
        try container.encode(device.access.name, forKey: .access)
    }
}

/// Writes an explicit `null` for a missing value, so every key of the schema is always present.
private func encodeOrNull<Key: CodingKey, Value: Encodable>(
    _ value: Value?, _ key: Key, in container: inout KeyedEncodingContainer<Key>
) throws {
    if let value { try container.encode(value, forKey: key) } else { try container.encodeNil(forKey: key) }
}

/// The JSON text of the reports: keys sorted, slashes (device paths) left as they are.
package enum DeviceReportJSON {
    /// A value on one line (`monitor --json`).
    package static func line(_ value: some Encodable) throws -> String {
        try encode(value, [.sortedKeys, .withoutEscapingSlashes])
    }

    /// A whole document, indented (`devices --json`, `probe --json`).
    package static func document(_ value: some Encodable) throws -> String {
        try encode(value, [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    }

    /// A list of devices as `devices --json` prints it: `document`, except that an empty list is `[]` on one
    /// line rather than the pretty-printer's "[\n\n]".
    package static func listing(_ devices: [InputDevice]) throws -> String {
        devices.isEmpty ? "[]" : try document(devices)
    }

    private static func encode(_ value: some Encodable, _ formatting: JSONEncoder.OutputFormatting) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = formatting
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

extension SoundCardHolder: Encodable {
    enum CodingKeys: String, CodingKey { case pid, command }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(pid, forKey: .pid)
        try encodeOrNull(command, .command, in: &container)
    }
}
