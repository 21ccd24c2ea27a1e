import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL

/// The cart the REPL plays, the arguments of its commands and the seed's `phone_hash`, as
/// values: no session, no engine.
@Suite(.timeLimit(.minutes(2))) struct REPLCartTests {
    @Test func aCartKeepsOneLinePerSKUWithItsUnitsAndAddsUpExactly() {
        var cart = REPLCart()
        #expect(cart.isEmpty && cart.total == 0 && cart.items.isEmpty)
        let first = cart.add(sku: "KIT-1001", name: "Термокружка", quantity: 2, unitPrice: 1990, currency: "RUB")
        guard case .changed(2, let line) = first else { Issue.record("\(first)"); return }
        #expect(line.quantity == 2 && line.total == 3980)
        _ = cart.add(sku: "X-1", name: nil, quantity: 3, unitPrice: Decimal(string: "0.1")!, currency: "RUB")
        _ = cart.add(sku: "KIT-1001", name: "Термокружка", quantity: 1, unitPrice: 1990, currency: "RUB")
        #expect(cart.lines.map(\.sku) == ["KIT-1001", "X-1"], "in the order the SKUs first went in")
        #expect(cart.units == 6)
        #expect(cart.total == Decimal(string: "5970.3")!, "decimals, not binary fractions")
        #expect(
            cart.items == [
                CartItem(productId: "KIT-1001", quantity: 3, itemPrice: 1990),
                CartItem(productId: "X-1", quantity: 3, itemPrice: EventAmount(Decimal(string: "0.1")!)),
            ])
        #expect(cart.currency == "RUB")
    }

    @Test func aLineHasOnePriceAndCannotOverflow() {
        var cart = REPLCart()
        _ = cart.add(sku: "A", name: nil, quantity: 1, unitPrice: 100, currency: nil)
        #expect(cart.add(sku: "A", name: nil, quantity: 1, unitPrice: 99, currency: nil) == .otherPrice(cart.lines[0]))
        #expect(cart.add(sku: "A", name: nil, quantity: Int.max, unitPrice: 100, currency: nil) == .tooMany)
        #expect(cart.units == 1, "a refused addition changes nothing")
    }

    @Test func removingTakesUnitsOrTheWholeLineAndNeverMoreThanThere() {
        var cart = REPLCart()
        _ = cart.add(sku: "A", name: nil, quantity: 3, unitPrice: 10, currency: "RUB")
        _ = cart.add(sku: "B", name: nil, quantity: 1, unitPrice: 5, currency: "EUR")
        #expect(cart.currency == nil, "lines of two currencies have no one currency")
        #expect(cart.remove(sku: "A", quantity: 4) == .tooFew(held: 3))
        guard case .changed(1, let line) = cart.remove(sku: "A", quantity: 1) else { Issue.record(); return }
        #expect(line.quantity == 2)
        guard case .changed(2, let gone) = cart.remove(sku: "A", quantity: nil) else { Issue.record(); return }
        #expect(gone.quantity == 0)
        #expect(cart.lines.map(\.sku) == ["B"])
        #expect(cart.remove(sku: "A", quantity: nil) == .notInCart)
        cart.empty()
        #expect(cart.isEmpty)
    }

    @Test func shopArgumentsAreASKUAQuantityAndAnAtPrice() throws {
        let parsed = try #require(ShopArguments(["KIT-1001", "2", "@19.99"], allowsPrice: true))
        #expect(parsed.sku == "KIT-1001" && parsed.quantity == 2 && parsed.price == Decimal(string: "19.99"))
        let priceFirst = try #require(ShopArguments(["KIT-1001", "@1990", "3"], allowsPrice: true))
        #expect(priceFirst.quantity == 3 && priceFirst.price == 1990)
        #expect(ShopArguments(["KIT-1001"], allowsPrice: true) == ShopArguments(["KIT-1001"], allowsPrice: false))
        for bad in [
            [], ["@5"], ["A", "0"], ["A", "-1"], ["A", "1000001"], ["A", "two"], ["A", "1", "2"], ["A", "@"],
            ["A", "@1,5"], ["A", "@.5"], ["A", "@5."], ["A", "@1.2.3"], ["A", "@1e3"], ["A", "@-1"],
            ["A", "@1", "@2"], ["A", "@1234567890123456789"],
        ] {
            #expect(ShopArguments(bad[...], allowsPrice: true) == nil, "\(bad)")
        }
        #expect(ShopArguments(["A", "@5"], allowsPrice: false) == nil, ":cart remove takes no price")
    }

    @Test func anEventsNameRunsUpToItsFirstProperty() throws {
        let event = try #require(CustomEventArguments("survey-completed-v1 Survey Completed score=9 variant=A note="))
        #expect(event.type == "survey-completed-v1")
        #expect(event.name == "Survey Completed")
        #expect(event.properties == ["score": "9", "variant": "A", "note": ""])
        #expect(CustomEventArguments("t n a=b=c")?.properties == ["a": "b=c"], "the first = splits")
        for bad in ["", "type", "type k=v", "t=1 name", "t n =v", "t n a=1 a=2", "t n a=1 loose"] {
            #expect(CustomEventArguments(bad) == nil, "\(bad)")
        }
    }

    @Test func sha256MatchesTheStandardsVectors() {
        #expect(SHA256.hex(Array("".utf8)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", "two blocks")
        #expect(
            SHA256.hex([UInt8](repeating: 0x61, count: 1000))
                == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test func aPhoneNumberIsNormalisedAsTheSeedSaysAndAnythingElseIsNot() {
        for phone in ["+7 (999) 123-45-67", "89991234567", "9991234567", "7.999.123.45.67"] {
            #expect(PhoneHash.normalised(phone) == "79991234567", "\(phone)")
        }
        #expect(PhoneHash.normalised("+44 20 7946 0958") == "442079460958")
        #expect(
            PhoneHash.cuid("+7 999 123 45 67") == "3ea3b0328a0f8f8056414a434a80f7625bfe7f5317c055fac455076b255e6716")
        for other in ["alice", "alice@example.com", "12345", "1234567890123456", "+7 999 123 45 67 x", "٧٩٩٩١٢٣٤٥٦٧"] {
            #expect(PhoneHash.normalised(other) == nil, "\(other)")
        }
    }
}
