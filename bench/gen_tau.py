#!/usr/bin/env python3
"""Native-format traces shaped like tau-bench retail runs, for bench/run.sh's tau figures.

    python3 bench/gen_tau.py -o FILE --bytes 200M [--seed 5]
    python3 bench/gen_tau.py -o FILE --hostile N     # one trace of N steps, for bench/hostile.rules

tau-bench's retail domain (Sierra, MIT; a slice is in examples/tau-retail): the agent
authenticates the user by email or name + zip, reads the user's profile, then order and
product details, and changes an order (cancel, modify items, return, exchange) or the
user's address after the user confirms. The tool results are the large JSON objects that
make these traces about 800 bytes a step: a user profile with its order ids and payment
methods, an order with its items, a product with its variants. Some traces break the
policies bench/tau.rules checks: a change to an order never looked up (or an id nobody
gave), a cancel reason outside the two allowed, a return to a gift card, tools after a
transfer to a human agent. Deterministic for a seed (Python's own random.Random).
"""
import argparse
import json
import random
import sys

FIRST = ["Yusuf", "Mia", "Aarav", "Sofia", "Noah", "Lucas", "Emma", "Ivan", "Chen", "Fatima", "Olga", "Omar"]
LAST = ["Rossi", "Garcia", "Patel", "Kim", "Silva", "Nguyen", "Brown", "Ito", "Moreau", "Khan", "Novak"]
CITIES = [("Philadelphia", "PA", "19122"), ("Austin", "TX", "78701"), ("Denver", "CO", "80202"),
          ("Seattle", "WA", "98101"), ("Columbus", "OH", "43215"), ("Portland", "OR", "97201")]
PRODUCTS = ["T-Shirt", "Water Bottle", "Desk Lamp", "Backpack", "Wireless Earbuds", "Office Chair",
            "Hiking Boots", "Mechanical Keyboard", "Coffee Maker", "Yoga Mat", "Smart Watch", "Tea Kettle"]
OPTIONS = {"color": ["black", "white", "red", "blue", "green"], "size": ["S", "M", "L", "XL"],
           "material": ["cotton", "polyester", "steel", "glass", "leather"], "capacity": ["500ml", "750ml", "1L"]}
WORDS = ("order item refund exchange return address delivered pending cancel payment card gift "
         "shipping tracking size color please thanks confirm help want would like my the a").split()
REASONS = ["no longer needed", "ordered by mistake"]


def sentence(r, n):
    return " ".join(r.choice(WORDS) for _ in range(n)).capitalize() + "."


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.calls = 0

    def ident(self, prefix, digits=7):
        return f"{prefix}{self.r.randrange(10 ** (digits - 1), 10 ** digits)}"

    def item(self):
        r = self.r
        opts = {k: r.choice(v) for k, v in r.sample(sorted(OPTIONS.items()), r.randint(2, 3))}
        return {"name": r.choice(PRODUCTS), "product_id": self.ident("", 10), "item_id": self.ident("", 10),
                "price": round(r.uniform(5, 900), 2), "options": opts}

    def user(self):
        r = self.r
        first, last = r.choice(FIRST), r.choice(LAST)
        city, state, zip_ = r.choice(CITIES)
        uid = f"{first.lower()}_{last.lower()}_{r.randrange(1000, 9999)}"
        cards = {}
        for kind in r.sample(["credit_card", "gift_card", "paypal"], r.randint(1, 3)):
            pid = self.ident(kind + "_")
            cards[pid] = {"source": kind, "id": pid}
            if kind == "credit_card":
                cards[pid].update(brand=r.choice(["visa", "mastercard"]), last_four=str(r.randrange(1000, 9999)))
            if kind == "gift_card":
                cards[pid]["balance"] = round(r.uniform(0, 300), 2)
        orders = [f"#W{r.randrange(1000000, 9999999)}" for _ in range(r.randint(1, 5))]
        return {"user_id": uid, "name": {"first_name": first, "last_name": last},
                "address": {"address1": f"{r.randrange(1, 999)} {r.choice(LAST)} Street",
                            "address2": f"Suite {r.randrange(100, 999)}", "city": city, "country": "USA",
                            "state": state, "zip": zip_},
                "email": f"{first.lower()}.{last.lower()}{r.randrange(1000, 9999)}@example.com",
                "payment_methods": cards, "orders": orders}

    def order(self, oid, user):
        r = self.r
        items = [self.item() for _ in range(r.randint(2, 6))]
        pay = r.choice(sorted(user["payment_methods"]))
        status = r.choice(["pending", "pending", "delivered", "delivered", "processed"])
        fulfil = [] if status == "pending" else [{"tracking_id": [self.ident("", 12)],
                                                  "item_ids": [i["item_id"] for i in items]}]
        return {"order_id": oid, "user_id": user["user_id"], "address": user["address"], "items": items,
                "fulfillments": fulfil, "status": status,
                "payment_history": [{"transaction_type": "payment", "amount": round(sum(i["price"] for i in items), 2),
                                     "payment_method_id": pay}]}

    def product(self, item):
        r = self.r
        variants = {}
        for _ in range(r.randint(16, 40)):
            vid = self.ident("", 10)
            variants[vid] = {"item_id": vid, "options": {k: r.choice(v) for k, v in sorted(OPTIONS.items())[:3]},
                             "available": r.random() < 0.7, "price": round(r.uniform(5, 900), 2)}
        return {"name": item["name"], "product_id": item["product_id"], "variants": variants}

    def call(self, tool, args, result, failed=False):
        self.calls += 1
        step = {"type": "tool_call", "id": f"call_{self.calls}", "tool": tool, "arguments": args,
                "result": result, "status": "error" if failed else "ok"}
        return step

    def trace(self, n):
        r = self.r
        steps = []
        user = self.user()
        say = lambda who, text: steps.append({"type": who, "content": text})
        say("user_message", sentence(r, r.randint(8, 20)))
        say("assistant_message", "I can help with that. Could you please provide your email address, or your name and zip code?")
        if r.random() < 0.5:
            say("user_message", f"Sure, it is {user['email']}.")
            steps.append(self.call("find_user_id_by_email", {"email": user["email"]}, user["user_id"]))
        else:
            say("user_message", f"My name is {user['name']['first_name']} {user['name']['last_name']}, zip {user['address']['zip']}.")
            steps.append(self.call("find_user_id_by_name_zip", {"first_name": user["name"]["first_name"],
                                                                "last_name": user["name"]["last_name"],
                                                                "zip": user["address"]["zip"]}, user["user_id"]))
        steps.append(self.call("get_user_details", {"user_id": user["user_id"]}, user))
        looked = {}
        while len(steps) < n:
            k = r.random()
            if k < 0.35 or not looked:
                oid = r.choice(user["orders"])
                say("user_message", f"It is about order {oid}. {sentence(r, r.randint(4, 12))}")
                looked[oid] = self.order(oid, user)
                steps.append(self.call("get_order_details", {"order_id": oid}, looked[oid]))
            elif k < 0.55:
                item = r.choice(r.choice(list(looked.values()))["items"])
                steps.append(self.call("get_product_details", {"product_id": item["product_id"]}, self.product(item)))
            elif k < 0.62:
                steps.append(self.call("think", {"thought": sentence(r, r.randint(10, 30))}, ""))
            elif k < 0.68:
                steps.append(self.call("calculate", {"expression": f"{r.randrange(10, 999)} - {r.randrange(1, 99)}"},
                                       str(r.randrange(1, 999))))
            elif k < 0.92:
                oid = r.choice(list(looked))
                if r.random() < 0.03:  # a change to an order nobody looked up, or an invented id
                    oid = r.choice(user["orders"] + [f"#W{r.randrange(1000000, 9999999)}"])
                say("assistant_message", f"To confirm: order {oid}, {sentence(r, r.randint(6, 14))} Shall I proceed (yes/no)?")
                say("user_message", "yes" if r.random() < 0.9 else "yes please go ahead")
                order = looked.get(oid) or self.order(oid, user)
                action = r.choice(["cancel", "modify", "return", "exchange", "address"])
                items = [i["item_id"] for i in order["items"][: r.randint(1, len(order["items"]))]]
                pay = r.choice(sorted(user["payment_methods"]))
                if action == "cancel":
                    reason = r.choice(REASONS) if r.random() < 0.97 else "found it cheaper"
                    done = dict(order, status="cancelled")
                    steps.append(self.call("cancel_pending_order", {"order_id": oid, "reason": reason}, done))
                elif action == "modify":
                    new = [self.ident("", 10) for _ in items]
                    steps.append(self.call("modify_pending_order_items", {"order_id": oid, "item_ids": items,
                                                                          "new_item_ids": new, "payment_method_id": pay},
                                           dict(order, status="pending (item modified)")))
                elif action == "return":
                    steps.append(self.call("return_delivered_order_items",
                                           {"order_id": oid, "item_ids": items, "payment_method_id": pay},
                                           dict(order, status="return requested")))
                elif action == "exchange":
                    new = [self.ident("", 10) for _ in items]
                    steps.append(self.call("exchange_delivered_order_items", {"order_id": oid, "item_ids": items,
                                                                              "new_item_ids": new, "payment_method_id": pay},
                                           dict(order, status="exchange requested")))
                else:
                    addr = dict(user["address"], address1=f"{r.randrange(1, 999)} {r.choice(LAST)} Avenue")
                    if r.random() < 0.02:
                        addr["country"] = "Canada"
                    steps.append(self.call("modify_user_address", dict(addr, user_id=user["user_id"]),
                                           dict(user, address=addr)))
                say("assistant_message", sentence(r, r.randint(8, 20)))
            else:
                say("user_message", sentence(r, r.randint(6, 18)))
                say("assistant_message", sentence(r, r.randint(10, 30)))
        if r.random() < 0.05:
            steps.append(self.call("transfer_to_human_agents", {"summary": sentence(r, 12)}, "Transfer successful"))
            if r.random() < 0.2:
                steps.append(self.call("get_order_details", {"order_id": r.choice(user["orders"])}, "{}"))
        return steps


def hostile(n):
    """One trace of n steps against the linear-time promise: every lookup binds a new order id
    (live bindings grow with the trace), steps that bind nothing (think, user text) sit between
    every binding step, and every change names an id nobody gave, so seen() searches all the
    results and user text so far, and the per-order rules keep a violation for each."""
    steps, k = [{"type": "user_message", "content": "hello, my email is a@example.com"},
                {"type": "tool_call", "tool": "find_user_id_by_email", "arguments": {"email": "a@example.com"},
                 "result": "user_a"},
                {"type": "tool_call", "tool": "get_user_details", "arguments": {"user_id": "user_a"},
                 "result": {"user_id": "user_a", "orders": []}}], 0
    while len(steps) < n:
        oid, k = f"#W{k:08d}", k + 1
        steps.append({"type": "tool_call", "tool": "get_order_details", "arguments": {"order_id": oid},
                      "result": {"order_id": oid, "status": "pending", "items": [{"item_id": f"{k:010d}"}]}})
        steps.append({"type": "tool_call", "tool": "think", "arguments": {"thought": f"step {k}"}, "result": ""})
        steps.append({"type": "user_message", "content": f"please also look at order #X{k:08d} today"})
        steps.append({"type": "tool_call", "tool": "cancel_pending_order",
                      "arguments": {"order_id": f"#Z{k:08d}", "reason": "no longer needed"}, "result": {"status": "cancelled"}})
    return {"trace_id": f"hostile_{n}", "context": {"domain": "retail"}, "steps": steps[:n]}


def size(text):
    units = {"K": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9}
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--bytes", default="200M")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--hostile", type=int, default=0, help="one hostile trace of this many steps")
    a = ap.parse_args()
    if a.hostile:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(json.dumps(hostile(a.hostile), separators=(",", ":")) + "\n")
        return
    g = Gen(a.seed)
    limit, written, traces, steps = size(a.bytes), 0, 0, 0
    with open(a.out, "w", encoding="utf-8") as f:
        while written < limit:
            s = g.trace(g.r.randint(8, 40))
            line = json.dumps({"trace_id": f"tau_{traces}", "context": {"domain": "retail", "tenant": "acme"},
                               "steps": s}, separators=(",", ":")) + "\n"
            f.write(line)
            written += len(line.encode("utf-8"))
            traces += 1
            steps += len(s)
    print(f"traces {traces} steps {steps} bytes {written}", file=sys.stderr)


if __name__ == "__main__":
    main()
