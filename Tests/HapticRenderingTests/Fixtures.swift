import AHAPFiles
import Foundation
import HapticRendering
import HapticTestDevices
import Testing

/// Small builders for exact-value tests.
enum Build {
    static func transient(at time: Double, intensity: Double, sharpness: Double, decay: Double? = nil) -> HapticEvent {
        var parameters = [
            HapticEventParameter(parameterID: .hapticIntensity, value: intensity),
            HapticEventParameter(parameterID: .hapticSharpness, value: sharpness),
        ]
        if let decay { parameters.append(HapticEventParameter(parameterID: .decayTime, value: decay)) }
        return HapticEvent(type: .hapticTransient, parameters: parameters, relativeTime: time)
    }

    static func continuous(
        at time: Double, duration: Double, intensity: Double, sharpness: Double,
        extra: [(HapticEvent.ParameterID, Double)] = []
    ) -> HapticEvent {
        let parameters =
            [
                HapticEventParameter(parameterID: .hapticIntensity, value: intensity),
                HapticEventParameter(parameterID: .hapticSharpness, value: sharpness),
            ] + extra.map { HapticEventParameter(parameterID: $0.0, value: $0.1) }
        return HapticEvent(type: .hapticContinuous, parameters: parameters, relativeTime: time, duration: duration)
    }

    static func pattern(
        _ events: [HapticEvent], parameters: [HapticDynamicParameter] = [], curves: [HapticParameterCurve] = []
    ) -> HapticPattern {
        HapticPattern(events: events, parameters: parameters, parameterCurves: curves)
    }

    static func curve(_ id: HapticDynamicParameter.ID, at time: Double, _ points: [(Double, Double)])
        -> HapticParameterCurve
    {
        HapticParameterCurve(
            parameterID: id, controlPoints: points.map { .init(relativeTime: $0.0, value: $0.1) }, relativeTime: time)
    }

    /// A profile with chosen resolution and interval, otherwise generic.
    static func profile(steps: Int = 255, interval: Double = 0.020, gain: Double = 1) -> RenderProfile {
        RenderProfile(name: "test", strongSteps: steps, weakSteps: steps, minimumUpdateInterval: interval, gain: gain)
    }
}

/// The patterns of the package's AHAP fixtures (`AHAPFixtures`) and of the real-world corpus (`AHAPCorpus`, when
/// `AHAP_CORPUS` names it: tests that read it carry the `.corpus` trait).
enum RenderCorpus {
    /// Every fixture pattern, named by its file.
    static func fixtures() throws -> [(name: String, pattern: HapticPattern)] {
        let files = try AHAPFixtures.files()
        try #require(files.count >= 10, "expected the 10 AHAP fixtures, found \(files.count)")
        return try files.map { ($0.lastPathComponent, try HapticPattern(contentsOf: $0)) }
    }

    /// Every corpus pattern with its path relative to the corpus root.
    static func patterns() throws -> [(name: String, pattern: HapticPattern)] {
        let root = try AHAPCorpus.root()
        let urls = try AHAPCorpus.files()
        try #require(urls.count >= 36, "expected the 36 corpus files, found \(urls.count) under \(root.path)")
        return try urls.map { url in
            (String(url.path.dropFirst(root.path.count + 1)), try HapticPattern(contentsOf: url))
        }
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only when `AHAP_CORPUS` names a corpus; otherwise it is reported skipped, with the reason.
    static var corpus: Self { .enabled(if: AHAPCorpus.isNamed, Comment(rawValue: AHAPCorpus.unsetReason)) }
}

func close(_ a: Double, _ b: Double, within tolerance: Double = 1e-9) -> Bool { abs(a - b) <= tolerance }

func close(_ a: MotorMagnitudes, _ strong: Double, _ weak: Double, within tolerance: Double = 1e-9) -> Bool {
    close(a.strong, strong, within: tolerance) && close(a.weak, weak, within: tolerance)
}
