// The settings file reader (`~/.config/haptics/settings.json`).
import LinuxHaptics
import AppHaptics
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Whatever reads as settings must be written and read back unchanged.
package enum SettingsFuzzing {
    package static func run(_ bytes: UnsafeRawBufferPointer) {
        guard let settings = try? FeedbackSettings(fileData: Data(bytes)) else { return }
        let written: Data
        do {
            written = try settings.fileData()
        } catch {
            fatalError("invariant broken: settings that were read cannot be written: \(error)")
        }
        expect((try? FeedbackSettings(fileData: written)) == settings, "settings -> file -> settings changed them")
    }
}
