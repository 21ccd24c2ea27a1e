import Foundation
import Testing

@testable import ShoppingAssistant

@Suite(.timeLimit(.minutes(2))) struct ConfigurationParsingTests {
    private let full = AssistantConfiguration(
        enabled: true, title: "Помощник магазина", subtitle: "Помогу выбрать подходящий товар.",
        suggests: ["Помогите выбрать подарок"])

    private func outcome(_ campaigns: [(id: String?, contents: [String?])]) -> ConfigurationOutcome {
        ConfigurationOutcome(PrepFixtures.content(campaigns))
    }

    // MARK: - AssistantConfiguration.parse (C1, C3, C6)

    // covers: C1
    @Test func parsesTheConfigurationFields() {
        #expect(AssistantConfiguration.parse(json: Fixtures.configurationJSON) == full)
    }

    // covers: C3
    @Test func unknownFieldsAreIgnored() {
        let json =
            #"{"enabled":true,"title":"Помощник магазина","subtitle":"Помогу выбрать подходящий товар.","suggests":["Помогите выбрать подарок"],"theme":{"color":"red"},"version":3,"extra":null}"#
        #expect(AssistantConfiguration.parse(json: json) == full)
    }

    // covers: C1
    @Test func optionalFieldsMayBeMissingOrNull() {
        #expect(
            AssistantConfiguration.parse(json: #"{"enabled":true}"#)
                == AssistantConfiguration(enabled: true, title: "", subtitle: nil, suggests: []))
        #expect(
            AssistantConfiguration.parse(json: #"{"enabled":true,"title":"T","subtitle":null,"suggests":null}"#)
                == AssistantConfiguration(enabled: true, title: "T", subtitle: nil, suggests: []))
    }

    // covers: C6
    @Test(arguments: [
        "{not json",
        "",
        #"["enabled", true]"#,
        #""enabled""#,
        #"{"title":"T","suggests":[]}"#,
        #"{"enabled":null,"title":"T"}"#,
        #"{"enabled":"true","title":"T"}"#,
        #"{"enabled":1,"title":"T"}"#,
        #"{"enabled":true,"title":42}"#,
        #"{"enabled":true,"subtitle":["x"]}"#,
        #"{"enabled":true,"suggests":"Помогите"}"#,
        #"{"enabled":true,"suggests":["ok",2]}"#,
        #"{"enabled":true,"suggests":[null]}"#,
    ])
    func unparsableConfigurationIsRejected(_ json: String) {
        #expect(AssistantConfiguration.parse(json: json) == nil)
    }

    // MARK: - ConfigurationOutcome (C2, C4, C5, C6)

    // covers: C1, C4
    @Test func oneConfigurationIsReadyWithItsCampaign() {
        #expect(outcome([("c-1", [Fixtures.configurationJSON])]) == .ready(full, campaignId: "c-1"))
    }

    // covers: C2
    @Test func disabledIsUnavailableWhateverTheOtherFieldsSay() {
        #expect(outcome([("c-1", [#"{"enabled":false}"#])]) == .unavailable(.disabled))
        #expect(
            outcome([("c-1", [#"{"enabled":false,"title":"Помощник","suggests":["a"]}"#])]) == .unavailable(.disabled))
        // Other fields are not used, so leftovers of an old setup do not make it a failure.
        #expect(outcome([("c-1", [#"{"enabled":false,"title":7,"suggests":"x"}"#])]) == .unavailable(.disabled))
    }

    // covers: C5
    @Test func nothingSelectedIsNotFound() {
        #expect(outcome([]) == .unavailable(.notFound))
        #expect(outcome([("c-1", [])]) == .unavailable(.notFound))
        #expect(outcome([("c-1", []), ("c-2", [])]) == .unavailable(.notFound))
    }

    // covers: C5, C6
    @Test func contentWithoutCustomJSONIsInvalid() {
        guard case .invalid = outcome([("c-1", [nil])]) else {
            Issue.record("a content without custom.json must be invalid_configuration, not notFound")
            return
        }
        guard case .invalid = outcome([("c-1", [Fixtures.configurationJSON]), ("c-2", [nil])]) else {
            Issue.record("a second content without custom.json must be invalid_configuration")
            return
        }
    }

    // covers: C6
    @Test(arguments: ["{oops", #"{"title":"T"}"#, #"{"enabled":"yes"}"#, #"{"enabled":true,"suggests":[1]}"#])
    func unparsableContentIsInvalid(_ json: String) {
        guard case .invalid = outcome([("c-1", [json])]) else {
            Issue.record("expected invalid for \(json)")
            return
        }
    }

    // covers: C4
    @Test func differentConfigurationsAreInvalid() {
        let other = PrepFixtures.configuration(title: "Другой помощник")
        guard case .invalid = outcome([("c-1", [Fixtures.configurationJSON]), ("c-2", [other])]) else {
            Issue.record("two campaigns with different configurations must be invalid")
            return
        }
        guard case .invalid = outcome([("c-1", [Fixtures.configurationJSON, other])]) else {
            Issue.record("two contents with different configurations must be invalid")
            return
        }
        // Enabled in one, disabled in the other: different too.
        guard case .invalid = outcome([("c-1", [Fixtures.configurationJSON]), ("c-2", [#"{"enabled":false}"#])]) else {
            Issue.record("an enabled and a disabled configuration must be invalid")
            return
        }
    }

    // covers: C4, C3
    @Test func identicalDuplicatesAreOneConfiguration() {
        let reordered =
            #"{"suggests":["Помогите выбрать подарок"],"subtitle":"Помогу выбрать подходящий товар.","title":"Помощник магазина","enabled":true,"note":"dup"}"#
        #expect(
            outcome([("c-1", [Fixtures.configurationJSON]), ("c-2", [reordered])]) == .ready(full, campaignId: "c-1"))
        #expect(
            outcome([("c-1", [Fixtures.configurationJSON, Fixtures.configurationJSON])])
                == .ready(full, campaignId: "c-1"))
    }

    // MARK: - AssistantEntry.parse (E1, E2)

    // covers: E1
    @Test func entryIsReadFromCustomJSON() {
        let response = PrepFixtures.content([
            ("c-e", [#"{"enabled":true,"title":"Спросить помощника","color":"blue"}"#])
        ])
        #expect(AssistantEntry.parse(response) == AssistantEntry(enabled: true, title: "Спросить помощника"))
    }

    // covers: E1
    @Test func disabledEntryHidesTheButton() {
        let response = PrepFixtures.content([("c-e", [#"{"enabled":false,"title":"Спросить"}"#])])
        #expect(AssistantEntry.parse(response)?.enabled == false)
    }

    // covers: E1
    @Test func failedRequestOrMissingDataHidesTheButton() {
        #expect(AssistantEntry.parse(nil) == nil)
        #expect(AssistantEntry.parse(ContentResponse(data: [])) == nil)
        #expect(AssistantEntry.parse(PrepFixtures.content([("c-e", [])])) == nil)
        #expect(AssistantEntry.parse(PrepFixtures.content([("c-e", [nil])])) == nil)
    }

    // covers: E1
    @Test(arguments: [
        "{oops", "", #"{"title":"Спросить"}"#, #"{"enabled":"true"}"#, #"[true]"#, #"{"enabled":true,"title":5}"#,
    ])
    func malformedEntryHidesTheButton(_ json: String) {
        #expect(AssistantEntry.parse(PrepFixtures.content([("c-e", [json])])) == nil)
    }

    // covers: E2
    @Test func onlyTheFirstSelectedContentIsUsed() {
        let first = #"{"enabled":true,"title":"Первый"}"#
        let second = #"{"enabled":true,"title":"Второй","subtitle":"s"}"#
        #expect(AssistantEntry.parse(PrepFixtures.content([("c-1", [first]), ("c-2", [second])]))?.title == "Первый")
        // A disabled first campaign is not overridden by an enabled second one.
        let disabled = #"{"enabled":false}"#
        #expect(
            AssistantEntry.parse(PrepFixtures.content([("c-1", [disabled]), ("c-2", [second])]))
                == AssistantEntry(enabled: false, title: ""))
        // Fields missing in the first are not filled in from the second.
        let untitled = #"{"enabled":true}"#
        #expect(
            AssistantEntry.parse(PrepFixtures.content([("c-1", [untitled]), ("c-2", [second])]))
                == AssistantEntry(enabled: true, title: ""))
        // A malformed first content is not replaced by a later one.
        #expect(AssistantEntry.parse(PrepFixtures.content([("c-1", ["{oops"]), ("c-2", [second])])) == nil)
    }
}
