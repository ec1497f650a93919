import Foundation
import Testing

/// `haptics render` end to end (`CLI`): a pattern named as `haptics play` names it.
@Suite struct RenderCommandTests {
    /// The repository's `Haptics/thud.ahap`, by its path.
    static let thud = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Haptics/thud.ahap").path

    /// The native periodic program in json gives each effect's delay and length in pattern time, whole: an event
    /// at 100 s is 100000 ms in (it was clamped to the kernel field's most, 32767, like every event after 32.8 s).
    @Test func jsonGivesANativeEffectsDelayAndLengthWholePastTheKernelsField() throws {
        let pattern = """
            {"Version":1,"Pattern":[
             {"Event":{"Time":40,"EventType":"HapticContinuous","EventDuration":30,"EventParameters":[
               {"ParameterID":"HapticIntensity","ParameterValue":0.5}]}},
             {"Event":{"Time":100,"EventType":"HapticTransient","EventParameters":[
               {"ParameterID":"HapticIntensity","ParameterValue":1}]}}
            ]}
            """
        try CLI.withFile(pattern) { file in
            let run = try CLI.run(["render", "--format", "json", file])
            #expect(run.status == 0, "\(run.errors)")
            let root = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
            let native = try #require(root["nativePeriodic"] as? [String: Any])
            let effects = try #require(native["effects"] as? [[String: Any]])
            #expect(effects.compactMap { $0["delayMs"] as? Double } == [40000, 100000])
            #expect(effects.first?["lengthMs"] as? Double == 30000)
        }
    }

    @Test func aNameRendersThePatternOfTheHapticsFolderAsItsPathDoes() throws {
        let byPath = try CLI.run(["render", "--format", "csv", Self.thud])
        let byName = try CLI.run(["render", "--format", "csv", "thud"])
        let withExtension = try CLI.run(["render", "--format", "csv", "thud.ahap"])
        #expect(byPath.status == 0, "\(byPath.errors)")
        #expect(byPath.output.hasPrefix("time,strong,weak\n"), "\(byPath.output.prefix(80))")
        #expect(byName.status == 0, "\(byName.errors)")
        #expect(byName.output == byPath.output)
        #expect(withExtension.output == byPath.output)
    }

    @Test func aMissingPathIsReportedAsAPathAndAMissingNameAsANameInTheFolder() throws {
        let path = try CLI.run(["render", "/nonexistent/tap.ahap"])
        #expect(path.status != 0)
        #expect(path.output.isEmpty, "nothing rendered")
        #expect(
            path.errors.hasPrefix(
                "haptics render: cannot find the pattern /nonexistent/tap.ahap: no file /nonexistent/tap.ahap\n"),
            "\(path.errors)")
        #expect(path.errors.contains("`haptics render thud`"), "\(path.errors)")
        let name = try CLI.run(["render", "no-such-pattern"])
        #expect(name.status != 0)
        #expect(
            name.errors.hasPrefix(
                "haptics render: cannot find the pattern no-such-pattern: no file no-such-pattern, and no "
                    + "no-such-pattern.ahap in "), "\(name.errors)")
        #expect(name.errors.contains("set HAPTICS_DIR"), "\(name.errors)")
    }

    /// A path the system refuses for another reason than nothing being there is said as the system says it (a
    /// name too long, a folder this user may not search: each was "no file"), and an empty name as empty.
    @Test func aPathTheSystemRefusesSaysWhyAndAnEmptyNameIsSaidEmpty() throws {
        let long = "/tmp/" + String(repeating: "a", count: 300) + ".ahap"
        let tooLong = try CLI.run(["render", long])
        #expect(tooLong.status == 1)
        #expect(
            tooLong.errors.hasPrefix("haptics render: cannot reach the pattern \(long): File name too long"),
            "\(tooLong.errors)")
        let throughAFile = try CLI.run(["render", "/etc/passwd/thud.ahap"])
        #expect(throughAFile.errors.contains(": Not a directory"), "\(throughAFile.errors)")
        let empty = try CLI.run(["render", ""])
        #expect(empty.status == 1)
        #expect(
            empty.errors.hasPrefix("haptics render: no pattern named: the pattern argument is empty"),
            "\(empty.errors)")
        let cues = try CLI.run(["replay", "--cues", ""])
        #expect(cues.status == 64)
        #expect(cues.errors.hasPrefix("Error: --cues takes the path of a cue sheet; it is empty"), "\(cues.errors)")
    }
}
