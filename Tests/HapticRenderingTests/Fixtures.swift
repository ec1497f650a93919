import AHAP
import Foundation
import HapticRendering
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

/// The shared real-world corpus, `<package>/../shared/ahap`. Missing means failure, never a skip.
enum RenderCorpus {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/ahap", isDirectory: true)

    /// Every corpus pattern with its path relative to the corpus root.
    static func patterns() throws -> [(name: String, pattern: HapticPattern)] {
        try #require(FileManager.default.fileExists(atPath: root.path), "AHAP corpus missing at \(root.path)")
        let enumerator = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
        var urls: [URL] = []
        for case let url as URL in enumerator where url.pathExtension == "ahap" { urls.append(url) }
        try #require(urls.count >= 36, "expected the 36 corpus files, found \(urls.count) under \(root.path)")
        return try urls.sorted { $0.path < $1.path }.map { url in
            (String(url.path.dropFirst(root.path.count + 1)), try HapticPattern(contentsOf: url))
        }
    }
}

func close(_ a: Double, _ b: Double, within tolerance: Double = 1e-9) -> Bool { abs(a - b) <= tolerance }

func close(_ a: MotorMagnitudes, _ strong: Double, _ weak: Double, within tolerance: Double = 1e-9) -> Bool {
    close(a.strong, strong, within: tolerance) && close(a.weak, weak, within: tolerance)
}
