import Foundation

/// The version of Margin, shown by `margin --version` and sent as the User-Agent.
public enum MarginVersion {
    public static let current = "0.1.0"
}
