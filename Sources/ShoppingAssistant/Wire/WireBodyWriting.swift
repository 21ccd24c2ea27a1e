// How each request body writes itself (`JSONBodyWritable`): the same keys and the same rules
// as its `Encodable` conformance (renamed keys, values left out when absent), members in
// ascending UTF-8 order of their keys.

extension GravityRequest: JSONBodyWritable where Payload: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("ctx", ctx)
            json.member("data", ifPresent: data)
            json.member("device", device)
            json.member("options", options)
            json.member("sec", sec)
            json.member("type", ifPresent: type)
            json.member("user", user)
        }
    }
}

extension GravityDevice: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("id", ifPresent: id)
            json.member("permission", permission)
            json.member("tracking", tracking)
            json.member("ua", userAgent)
        }
    }
}

extension GravityUser: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("custom", ifPresent: custom)
            json.member("ses", ifPresent: ses)
            json.member("uid", ifPresent: uid)
        }
    }
}

extension GravitySelectorRequest: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("option", options)
            json.member("selector", selector)
        }
    }
}

extension GravityOptions: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("isBuildEngagementUrl", isBuildEngagementUrl)
            json.member("isImplicitImpression", isImplicitImpression)
            json.member("isImplicitPageview", isImplicitPageview)
            json.member("isReturnAnalyticsMetadata", isReturnAnalyticsMetadata)
            json.member("isReturnCounter", isReturnCounter)
            json.member("isReturnUserInfo", isReturnUserInfo)
        }
    }
}

extension GravityContentSettings: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("fields", ifPresent: fields)
            json.member("skusOnly", skusOnly)
        }
    }
}

extension PageContext: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("attributes", ifPresent: attributes)
            json.member("data", data)
            json.member("lng", ifPresent: lng)
            json.member("location", location)
            json.member("pageNumber", ifPresent: pageNumber)
            json.member("referrer", ifPresent: referrer)
            json.member("type", type.rawValue)
            json.member("utm", ifPresent: utm)
        }
    }
}

extension ShoppingRuntimeContext: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("campaignId", ifPresent: campaignId)
            json.member("page", page)
            json.member("selector", selector)
            json.member("tenant_id", tenantId)
            json.member("uid", uid)
        }
    }
}

extension ShoppingMessageRequest: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("messageId", messageId)
            json.member("resourceId", resourceId)
            json.member("runtimeContext", runtimeContext)
            json.member("text", text)
            json.member("threadId", threadId)
        }
    }
}

extension ShoppingFeedbackRequest: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("messageId", messageId)
            json.member("rating", rating)
            json.member("resourceId", resourceId)
            json.member("runtimeContext", runtimeContext)
            json.member("threadId", threadId)
        }
    }
}

extension GravityEvent: JSONBodyWritable {
    /// `type`, `name` and the fields, all in one ascending order of their keys.
    func write(to json: inout JSONBodyWriter) {
        var keys = Array(fields.keys)
        keys.append(contentsOf: ["name", "type"])
        keys.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        json.object { json in
            for key in keys {
                switch key {
                case "name": json.member("name", name)
                case "type": json.member("type", type)
                default: fields[key].map { json.member(named: key, $0) }
                }
            }
        }
    }
}

extension GravityEvent.Field: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        switch self {
        case .text(let value): json.string(value)
        case .integer(let value): value.write(to: &json)
        case .amount(let value): json.raw(value.description)
        case .cart(let items): items.write(to: &json)
        case .properties(let value): value.write(to: &json)
        }
    }
}

extension CartItem: JSONBodyWritable {
    /// As the SDKs send a cart line: `{"itemPrice", "productId", "quantity"}`.
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("itemPrice", GravityEvent.Field.amount(itemPrice.decimal))
            json.member("productId", productId)
            json.member("quantity", quantity)
        }
    }
}
