internal import CALSA
internal import Glibc
@_spi(Internals) internal import LinuxSystem

/// A PCM device alsa-lib knows by name: what `aplay -L` lists.
public struct AudioDeviceName: Sendable, Hashable {
    /// The name to open ("default", "hw:CARD=Loopback,DEV=0", "null"...).
    public let name: String
    /// alsa-lib's description, its lines joined with " / " ("Loopback, Loopback PCM / Direct hardware device
    /// without any conversions").
    public let description: String
    public let canPlay: Bool
    public let canCapture: Bool
}

public enum AudioDevices {
    /// The PCM devices alsa-lib's configuration and the sound cards present define (`snd_device_name_hint`):
    /// the sound server's and dmix's where configured, every card's `hw:`/`plughw:` devices, "null". Devices
    /// that only capture are left out unless `includingCaptureOnly`.
    public static func list(includingCaptureOnly: Bool = false) throws(AudioDeviceError) -> [AudioDeviceName] {
        _ = alsaDiagnosticsQuieted
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        let result =
            SyscallFaults.injected(at: { "snd_device_name_hint" }).map { -Int32($0.rawValue) }
            ?? snd_device_name_hint(-1, "pcm", &hints)
        guard result >= 0, let hints else {
            throw PCM.error(Int(result), call: "snd_device_name_hint", device: "(all cards)")
        }
        defer { snd_device_name_free_hint(hints) }
        var devices: [AudioDeviceName] = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            guard let name = text(hint, "NAME") else { continue }
            // IOID is absent for devices that do both.
            let direction = text(hint, "IOID")
            let device = AudioDeviceName(
                name: name, description: (text(hint, "DESC") ?? "").split(separator: "\n").joined(separator: " / "),
                canPlay: direction != "Input", canCapture: direction != "Output")
            if device.canPlay || includingCaptureOnly { devices.append(device) }
        }
        return devices
    }

    /// A field of a hint, which alsa-lib allocates for the caller to free.
    private static func text(_ hint: UnsafeMutableRawPointer, _ field: String) -> String? {
        guard let value = snd_device_name_get_hint(hint, field) else { return nil }
        defer { free(value) }
        return String(cString: value)
    }
}
