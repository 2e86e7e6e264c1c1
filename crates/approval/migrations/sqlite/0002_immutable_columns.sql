-- What a request asked, and a decision once made, never change: only the columns of the one
-- transition out of `pending`, then `consumed_at` and `finished_at` once each, are ever set.
-- (These triggers stop mistakes and programs that use the schema; they are no defence against
-- someone who can write the file, which its permissions are for.)

CREATE TRIGGER confirmation_request_immutable BEFORE UPDATE ON confirmation_request
WHEN NEW.id IS NOT OLD.id
  OR NEW.idempotency_key IS NOT OLD.idempotency_key
  OR NEW.run_id IS NOT OLD.run_id
  OR NEW.session_id IS NOT OLD.session_id
  OR NEW.agent IS NOT OLD.agent
  OR NEW.tool_name IS NOT OLD.tool_name
  OR NEW.tool_call_id IS NOT OLD.tool_call_id
  OR NEW.arguments IS NOT OLD.arguments
  OR NEW.args_hash IS NOT OLD.args_hash
  OR NEW.reasons IS NOT OLD.reasons
  OR NEW.asked_by IS NOT OLD.asked_by
  OR NEW.approvers IS NOT OLD.approvers
  OR NEW.created_at IS NOT OLD.created_at
  OR NEW.expires_at IS NOT OLD.expires_at
  OR (OLD.status <> 'pending' AND (
        NEW.responded_at IS NOT OLD.responded_at
     OR NEW.responded_by IS NOT OLD.responded_by
     OR NEW.response_note IS NOT OLD.response_note
     OR NEW.edited_arguments IS NOT OLD.edited_arguments
     OR NEW.edited_args_hash IS NOT OLD.edited_args_hash
     OR NEW.channel IS NOT OLD.channel))
  OR (OLD.consumed_at IS NOT NULL AND NEW.consumed_at IS NOT OLD.consumed_at)
  OR (OLD.finished_at IS NOT NULL AND NEW.finished_at IS NOT OLD.finished_at)
BEGIN
    SELECT RAISE(ABORT, 'a confirmation request''s question and decision cannot change');
END;
