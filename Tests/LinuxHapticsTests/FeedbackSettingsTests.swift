// The persisted on/off switch: location, survival across a restart, atomic writes, corrupt files.
import Foundation
import LinuxHaptics
@testable import AppHaptics
import LinuxHapticsTesting
import Testing

@Suite struct FeedbackSettingsTests {
    @Test func locationFollowsXDG() {
        #expect(
            FeedbackSettingsStore.defaultFileURL(environment: ["XDG_CONFIG_HOME": "/x/config", "HOME": "/home/u"])?.path
                == "/x/config/haptics/settings.json")
        #expect(
            FeedbackSettingsStore.defaultFileURL(environment: ["HOME": "/home/u"])?.path
                == "/home/u/.config/haptics/settings.json")
        // The XDG spec ignores relative values.
        #expect(
            FeedbackSettingsStore.defaultFileURL(environment: ["XDG_CONFIG_HOME": "rel", "HOME": "/home/u"])?.path
                == "/home/u/.config/haptics/settings.json")
        #expect(FeedbackSettingsStore.defaultFileURL(environment: [:]) == nil)
    }

    /// With neither variable set, the account's home folder; without one, no file at all: until 5 December the
    /// store fell back to `$TMPDIR` or `/tmp/haptics/settings.json`, which every user of the machine can write
    /// to (one could plant another's setting, or a link where it is written), and an empty TMPDIR meant the
    /// current folder.
    @Test func withoutTheVariablesTheAccountsHomeElseNoFileAndNeverASharedFolder() throws {
        #expect(
            FeedbackSettingsStore.fileURL(environment: ["TMPDIR": ""], accountHome: "/home/u")?.path
                == "/home/u/.config/haptics/settings.json")
        for home in [nil, "", "/", "relative"] {
            #expect(FeedbackSettingsStore.fileURL(environment: ["TMPDIR": "/tmp"], accountHome: home) == nil)
        }
        let log = RecordingLog()
        let store = FeedbackSettingsStore(file: nil, logger: log.logger)
        #expect(store.hapticsEnabled)
        store.hapticsEnabled = false
        #expect(store.hapticsEnabled == false, "the switch still works for the run")
        #expect(log.contains("holds for this run only"), "\(log.entries)")
        // The store an app makes with no variables set is in no shared folder.
        let plain = FeedbackSettingsStore(environment: [:], logger: log.logger)
        #expect(plain.fileURL.map { !$0.path.hasPrefix("/tmp/") && $0.path.hasPrefix("/") } ?? true)
    }

    @Test func theSwitchSurvivesARestart() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let environment = ["XDG_CONFIG_HOME": scratch.url.path]
        let log = RecordingLog()
        let first = FeedbackSettingsStore(environment: environment, logger: log.logger)
        #expect(first.hapticsEnabled, "on by default")
        first.hapticsEnabled = false
        let second = FeedbackSettingsStore(environment: environment, logger: log.logger)
        #expect(second.hapticsEnabled == false)
        #expect(second.fileURL?.path == scratch.url.path + "/haptics/settings.json")
        second.hapticsEnabled = true
        #expect(FeedbackSettingsStore(environment: environment, logger: log.logger).hapticsEnabled)
        #expect(log.entries.isEmpty, "\(log.entries)")
    }

    /// A change may read the store it changes (it trapped on the store's lock, until 6 December); a change asked
    /// for from inside another is refused with an error and changes nothing, and the outer one is made and saved.
    @Test func aChangeMayReadTheStoreAndOneFromInsideAnotherIsRefused() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let log = RecordingLog()
        let store = FeedbackSettingsStore(
            fileURL: scratch.url.appendingPathComponent("settings.json"), logger: log.logger)
        store.update { $0.hapticsEnabled = !store.hapticsEnabled }
        #expect(store.hapticsEnabled == false)
        #expect(log.entries.isEmpty, "\(log.entries)")
        store.update { settings in
            store.hapticsEnabled = false
            settings.hapticsEnabled = true
        }
        #expect(store.hapticsEnabled)
        #expect(log.entries.map(\.level) == [.error], "\(log.entries)")
        #expect(log.contains("from inside another"))
        let saved = try JSONDecoder().decode(FeedbackSettings.self, from: Data(contentsOf: #require(store.fileURL)))
        #expect(saved.hapticsEnabled)
    }

    @Test func writesLeaveOnlyTheSettingsFile() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let store = FeedbackSettingsStore(
            fileURL: scratch.url.appendingPathComponent("settings.json"), logger: RecordingLog().logger)
        for index in 0..<20 { store.hapticsEnabled = index.isMultiple(of: 2) }
        let entries = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path)
        #expect(entries == ["settings.json"], "no temporary file left behind")
        let saved = try JSONDecoder().decode(FeedbackSettings.self, from: Data(contentsOf: #require(store.fileURL)))
        #expect(saved.hapticsEnabled == false)
    }

    @Test(arguments: ["{not json", "", #"{"hapticsEnabled": "yes"}"#, "[]"])
    func aCorruptFileFallsBackToDefaultsWithALog(_ text: String) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let file = try scratch.write(text, to: "settings.json")
        let log = RecordingLog()
        let store = FeedbackSettingsStore(fileURL: file, logger: log.logger)
        #expect(store.settings == .defaults)
        #expect(log.contains("corrupt") && log.contains(file.path), "\(log.entries)")
        // The next change replaces the corrupt file.
        store.hapticsEnabled = false
        #expect(FeedbackSettingsStore(fileURL: file, logger: log.logger).hapticsEnabled == false)
    }

    /// A file that names no switch (`{}`, or one with only settings this version does not know) is the defaults,
    /// read without a log: until 6 December a missing key made the whole file "unreadable or corrupt".
    @Test(arguments: ["{}", #"{"someLaterSetting": 3}"#, #"{"hapticsEnabled": false, "someLaterSetting": [1]}"#])
    func aSettingTheFileDoesNotNameKeepsItsDefaultWithoutALog(_ text: String) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let file = try scratch.write(text, to: "settings.json")
        let log = RecordingLog()
        let store = FeedbackSettingsStore(fileURL: file, logger: log.logger)
        #expect(store.hapticsEnabled == !text.contains("false"))
        #expect(log.entries.isEmpty, "\(log.entries)")
    }

    /// A pipe left where the settings file goes is not read, as nothing but a regular file is (the AHAP files'
    /// rule): the defaults hold, and the log says what it is (it said only "unreadable or corrupt", with
    /// Foundation's error).
    @Test func aPipeWhereTheFileGoesIsNotReadTheDefaultsHold() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let file = scratch.url.appendingPathComponent("settings.json")
        try #require(mkfifo(file.path, 0o600) == 0)
        let log = RecordingLog()
        let store = FeedbackSettingsStore(fileURL: file, logger: log.logger)
        #expect(store.settings == .defaults)
        #expect(log.contains("not a regular file") && log.contains(file.path), "\(log.entries)")
    }

    @Test func anUnwritableFolderKeepsTheChangeForTheRun() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        // A regular file where the folder should be: creating the folder fails for root too.
        let blocker = try scratch.write("", to: "haptics")
        let log = RecordingLog()
        let store = FeedbackSettingsStore(fileURL: blocker.appendingPathComponent("settings.json"), logger: log.logger)
        store.hapticsEnabled = false
        #expect(store.hapticsEnabled == false)
        #expect(log.contains("not saved"))
    }
}
