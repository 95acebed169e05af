// The table's chat panel: follows new messages by long-polling the page's messages route and
// posts a message in place (the form is a plain POST without this script). Every text is put
// in with textContent, never as markup; the words shown come from the page.

const panel = document.getElementById("chat");
const log = document.getElementById("chat-log");
const form = document.getElementById("chat-form");
const problem = document.getElementById("chat-error");
const PART = {"X-DOS-Part": "chat"};

function add(message) {
  if (log.querySelector(`li[data-id="${Number(message.id)}"]`)) { return; }
  log.querySelectorAll(".chat-empty").forEach((empty) => empty.remove());
  const item = document.createElement("li");
  item.dataset.id = String(message.id);
  const who = document.createElement("span");
  who.className = "chat-who";
  who.textContent = message.name;
  const when = document.createElement("time");
  when.className = "chat-when";
  when.dateTime = message.created_at;
  when.textContent = message.when;
  const text = document.createElement("p");
  text.className = "chat-text";
  text.textContent = message.text;
  item.append(who, " ", when, text);
  log.append(item);
  panel.dataset.after = String(Math.max(Number(panel.dataset.after), Number(message.id)));
}

async function follow() {
  for (;;) {
    try {
      const response = await fetch(
        panel.dataset.messages + "?after=" + encodeURIComponent(panel.dataset.after),
        {credentials: "same-origin", cache: "no-store"});
      if (!response.ok) { throw new Error(String(response.status)); }
      const page = await response.json();
      page.messages.forEach(add);
    } catch (error) {
      await new Promise((resolve) => window.setTimeout(resolve, 10000));
    }
  }
}

if (form) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const response = await fetch(form.action, {
        method: "POST", body: new URLSearchParams(new FormData(form)), headers: PART,
        credentials: "same-origin", cache: "no-store",
      });
      const answer = await response.json();
      if (response.ok) {
        add(answer);
        form.reset();
        problem.hidden = true;
      } else {
        problem.textContent = answer.detail || answer.title || String(response.status);
        problem.hidden = false;
      }
    } catch (error) {
      form.submit();  // no answer we can read: the plain POST says what happened
    } finally {
      button.disabled = false;
    }
  });
}

if (panel && log) { follow(); }
